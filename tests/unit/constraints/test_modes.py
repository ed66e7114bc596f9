"""Constraint modes on the fake backend, in this process: each mode runs on the same
examples, compile times are recorded, unsupported schemas are recorded per sample and the
run goes on, stop strings and token limits apply per mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend
from edgebench.constraints import parse_modes
from edgebench.io import read_jsonl
from edgebench.runner.engine import RunResult
from tests.helpers.constraints import examples, fakes, per_mode
from tests.helpers.fakes import fake_model
from tests.helpers.run_fake import RunFake


def run_modes(
    run_fake: RunFake, modes: str, backends: dict[str, FakeBackend], **settings: Any
) -> RunResult:
    return run_fake(
        examples=examples(),
        constraints=tuple(parse_modes(modes)),
        factory=per_mode(backends),
        **settings,
    )


def test_every_mode_decodes_the_same_examples(run_fake: RunFake) -> None:
    modes = "none,json,gbnf,outlines,mask"
    backends = fakes(modes)
    result = run_modes(run_fake, modes, backends)
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    for mode in parse_modes(modes):
        ids = [s["id"] for s in samples if s["constraint"] == mode]
        assert ids == ["e0", "e1", "e2"]
        seen = backends[mode].constraints
        assert seen == ([None] * 3 if mode == "none" else [mode] * 3)
    summary = result.summary
    assert summary.constraints == parse_modes(modes)
    assert [(a.model, a.constraint) for a in summary.arms] == [
        ("fake-model", mode) for mode in parse_modes(modes)
    ]
    # Same outputs and clock in every mode: same accuracy, a decode ratio of exactly 1.
    for arm in summary.arms:
        assert arm.status == "completed"
        assert arm.metrics["json_exact"] == pytest.approx(2 / 3)
        assert arm.decode_ratio_to_none == pytest.approx(1.0)
    # Written as read back: summary.json holds the same arms.
    written = json.loads((result.run_dir / "summary.json").read_text())
    assert [a["constraint"] for a in written["arms"]] == parse_modes(modes)


def test_compile_time_first_and_cached_per_distinct_schema(run_fake: RunFake) -> None:
    result = run_modes(run_fake, "none,gbnf,json", fakes("none,gbnf,json"))
    summary = result.summary
    gbnf = summary.arm("fake-model", "gbnf")
    json_arm = summary.arm("fake-model", "json")
    none = summary.arm("fake-model", "none")
    assert gbnf is not None and json_arm is not None and none is not None
    assert gbnf.compile.schemas == 2  # alpha twice, beta once
    assert gbnf.compile.first_s.p50 == pytest.approx(0.005)  # what the fake reports
    assert gbnf.compile.cached_s.p50 == 0.0
    assert gbnf.compile.sources == {"fake": 2}
    assert json_arm.compile.schemas == 1  # one grammar whatever the schema
    assert none.compile.schemas == 0
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    (arm,) = [a for a in manifest["arms"] if a["constraint"] == "gbnf"]
    records = arm["compile"]
    assert [r["label"] for r in records] == ["alpha", "beta"]
    assert all(r["cached_seconds"] == 0.0 and not r["cached"] and r["ok"] for r in records)


def test_unsupported_schema_is_recorded_per_sample_and_the_run_goes_on(
    run_fake: RunFake,
) -> None:
    message = "pattern \\s is not supported"
    backends = fakes("none,mask", unsupported={"beta": message})
    result = run_modes(run_fake, "none,mask", backends)
    samples = {(s["constraint"], s["id"]): s for s in read_jsonl(result.run_dir / "samples.jsonl")}
    refused = samples[("mask", "e1")]
    assert refused["constraint_status"] == "unsupported"
    assert refused["finish_reason"] == "unsupported"
    assert message in refused["error"] and refused["raw_output"] == ""
    assert refused["scores"]["edgejson"]["schema_compliance"] == 0
    assert samples[("mask", "e2")]["constraint_status"] == "applied"
    assert samples[("none", "e1")]["constraint_status"] == "none"
    mask = result.summary.arm("fake-model", "mask")
    assert mask is not None
    assert mask.n_unsupported == 1 and mask.compile.errors == {"beta": message}
    assert mask.noncompliant is not None and mask.noncompliant["unsupported"] == 1
    assert result.summary.status == "completed"
    # Nothing was decoded for the refused example: the fake saw two prompts, not three.
    assert len(backends["mask"].prompts) == 2


def test_stop_strings_apply_to_free_text_only(run_fake: RunFake) -> None:
    seen: dict[str, set[tuple[str, ...]]] = {"none": set(), "gbnf": set()}

    class Recording(FakeBackend):
        def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
            seen["gbnf" if settings.constraint else "none"].add(settings.stop)
            return super().generate(prompt, settings)

    run_modes(run_fake, "none,gbnf", {"none": Recording(), "gbnf": Recording()})
    completion_stop = fake_model().prompt_format.stop
    assert completion_stop  # the completion prompt ends at the closing code fence
    assert seen == {"none": {completion_stop}, "gbnf": {()}}


def test_token_limit_under_a_constraint_is_flagged(run_fake: RunFake) -> None:
    backends = {"mask": FakeBackend(["1 2 3 4 5 6 7 8 9 10"] * 3)}
    result = run_modes(run_fake, "mask", backends, max_tokens=4)
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert len(samples) == 3
    assert all(s["hit_token_limit"] and s["finish_reason"] == "length" for s in samples)
    assert all(s["raw_output"] == "1 2 3 4" for s in samples)
    mask = result.summary.arm("fake-model", "mask")
    assert mask is not None and mask.perf.hit_token_limit == 3
    assert mask.noncompliant is not None and mask.noncompliant["hit_token_limit"] == 3
