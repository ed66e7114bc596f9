"""Constraint modes on the fake backend: each mode runs on the same examples, compile
times are recorded, unsupported schemas are recorded per sample and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import BackendWorker, InProcessWorker
from edgebench.constraints import parse_modes, request_for, schema_key
from edgebench.constraints.llguidance_mask import TokenMask
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks.base import Example
from tests.unit.test_runner import EchoTask, model

SCHEMA_A = {"type": "object", "properties": {"a": {"type": "integer"}}}
SCHEMA_B = {"type": "object", "properties": {"b": {"type": "string", "pattern": "\\s+"}}}


def examples() -> list[Example]:
    return [
        Example("e0", "one two", "alpha", SCHEMA_A, "a b c", {"complexity": "simple"}),
        Example("e1", "three four", "beta", SCHEMA_B, "a b c", {"complexity": "medium"}),
        Example("e2", "five six", "alpha", SCHEMA_A, "x y", {"complexity": "simple"}),
    ]


def run_modes(
    tmp_path: Path, modes: str, backends: dict[str, FakeBackend], **settings: Any
) -> dict[str, Any]:
    cfg = RunSettings(
        out=tmp_path / "run", warmup=False, constraints=tuple(parse_modes(modes)), **settings
    )
    result = execute(
        cfg,
        model(),
        EchoTask(),
        examples(),
        {"path": "mem"},
        worker_factory=lambda mode: InProcessWorker(backends[mode]),
    )
    return result.summary


def fakes(modes: str, **options: Any) -> dict[str, FakeBackend]:
    return {m: FakeBackend(["a b c", "a b", "x y"], **options) for m in parse_modes(modes)}


def test_modes_are_parsed_in_order_without_repeats() -> None:
    assert parse_modes("none, mask,gbnf,mask") == ["none", "mask", "gbnf"]


@pytest.mark.parametrize(
    ("text", "fragment"), [("nonee", "unknown mode 'nonee'"), (" , ", "at least one mode")]
)
def test_bad_modes_are_one_line_errors(text: str, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        parse_modes(text)


def test_schema_key_ignores_key_order() -> None:
    assert schema_key({"a": 1, "b": [1, 2]}) == schema_key({"b": [1, 2], "a": 1})
    assert schema_key({"a": 1}) != schema_key({"a": 2})


def test_requests_per_mode() -> None:
    assert request_for("none", SCHEMA_A, "alpha") is None
    json_request = request_for("json", SCHEMA_A, "alpha")
    assert json_request is not None and json_request.schema is None
    mask = request_for("mask", SCHEMA_A, "alpha")
    assert mask is not None and mask.schema == SCHEMA_A and mask.key == schema_key(SCHEMA_A)


def test_every_mode_decodes_the_same_examples(tmp_path: Path) -> None:
    modes = "none,json,gbnf,outlines,mask"
    backends = fakes(modes)
    summary = run_modes(tmp_path, modes, backends)
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    for mode in parse_modes(modes):
        ids = [s["id"] for s in samples if s["constraint"] == mode]
        assert ids == ["e0", "e1", "e2"]
        seen = backends[mode].constraints
        assert seen == ([None] * 3 if mode == "none" else [mode] * 3)
    assert summary["constraints"] == parse_modes(modes)
    assert set(summary["by_constraint"]) == set(parse_modes(modes))
    # Same outputs and clock in every mode: same accuracy, a decode ratio of exactly 1.
    for result in summary["by_constraint"].values():
        assert result["metrics"]["json_exact"] == pytest.approx(2 / 3)
        assert result["decode_ratio_to_none"] == pytest.approx(1.0)
    assert summary["primary_constraint"] == "none"
    assert summary["metrics"] == summary["by_constraint"]["none"]["metrics"]


def test_compile_time_first_and_cached_per_distinct_schema(tmp_path: Path) -> None:
    summary = run_modes(tmp_path, "none,gbnf,json", fakes("none,gbnf,json"))
    gbnf = summary["by_constraint"]["gbnf"]["compile"]
    assert gbnf["schemas"] == 2  # alpha twice, beta once
    assert gbnf["first_s"]["p50"] == pytest.approx(0.005)
    assert gbnf["cached_s"]["p50"] == 0.0
    assert summary["by_constraint"]["json"]["compile"]["schemas"] == 1  # one grammar
    assert summary["by_constraint"]["none"]["compile"]["schemas"] == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    records = manifest["arms"]["gbnf"]["compile"]
    assert [r["label"] for r in records] == ["alpha", "beta"]
    assert all(r["cached_seconds"] == 0.0 and not r["cached"] for r in records)


def test_unsupported_schema_is_recorded_per_sample_and_the_run_goes_on(tmp_path: Path) -> None:
    message = "pattern \\s is not supported"
    backends = fakes("none,mask", unsupported={"beta": message})
    summary = run_modes(tmp_path, "none,mask", backends)
    samples = {
        (s["constraint"], s["id"]): s for s in read_jsonl(tmp_path / "run" / "samples.jsonl")
    }
    refused = samples[("mask", "e1")]
    assert refused["constraint_status"] == "unsupported"
    assert refused["finish_reason"] == "unsupported"
    assert message in refused["error"] and refused["raw_output"] == ""
    assert samples[("mask", "e2")]["constraint_status"] == "applied"
    assert samples[("none", "e1")]["constraint_status"] == "none"
    mask = summary["by_constraint"]["mask"]
    assert mask["n_unsupported"] == 1 and mask["compile"]["errors"] == {"beta": message}
    assert summary["status"] == "completed"
    # Nothing was decoded for the refused example: the fake saw two prompts, not three.
    assert len(backends["mask"].prompts) == 2


def test_stop_strings_apply_to_free_text_only(tmp_path: Path) -> None:
    seen: dict[str, set[tuple[str, ...]]] = {"none": set(), "gbnf": set()}

    class Recording(FakeBackend):
        def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
            seen["gbnf" if settings.constraint else "none"].add(settings.stop)
            return super().generate(prompt, settings)

    run_modes(tmp_path, "none,gbnf", {"none": Recording(), "gbnf": Recording()})
    completion_stop = model().prompt_format.stop
    assert completion_stop  # the completion prompt ends at the closing code fence
    assert seen == {"none": {completion_stop}, "gbnf": {()}}


def test_token_limit_under_a_constraint_is_flagged(tmp_path: Path) -> None:
    backends = {"mask": FakeBackend(["1 2 3 4 5 6 7 8 9 10"] * 3)}
    summary = run_modes(tmp_path, "mask", backends, max_tokens=4)
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert all(s["hit_token_limit"] and s["finish_reason"] == "length" for s in samples)
    assert summary["by_constraint"]["mask"]["perf"]["hit_token_limit"] == 3


def crashing_gbnf_factory(mode: str) -> Any:
    options: dict[str, Any] = {"outputs": ["a b c"] * 3}
    if mode == "gbnf":
        options["crash_marker"] = "three"  # dies on the second example
    return BackendWorker("fake", options)


def test_a_crashed_engine_costs_one_example_and_a_fresh_worker_goes_on(tmp_path: Path) -> None:
    cfg = RunSettings(out=tmp_path / "run", warmup=False, constraints=("none", "gbnf", "mask"))
    result = execute(
        cfg, model(), EchoTask(), examples(), {"path": "mem"}, worker_factory=crashing_gbnf_factory
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and result.worker_failures == 1
    assert {m: a["status"] for m, a in manifest["arms"].items()} == dict.fromkeys(
        ("none", "gbnf", "mask"), "completed"
    )
    gbnf = manifest["arms"]["gbnf"]
    assert gbnf["restarts"] == 1 and len(gbnf["reload_s"]) == 1
    (failure,) = gbnf["worker_failures"]
    assert failure["id"] == "e1" and failure["kind"] == "crashed"
    assert "SIGSEGV" in failure["error"] and "fake-model, gbnf" in failure["error"]
    samples = [
        s for s in read_jsonl(tmp_path / "run" / "samples.jsonl") if s["constraint"] == "gbnf"
    ]
    assert [(s["id"], s["finish_reason"]) for s in samples] == [
        ("e0", "stop"),
        ("e1", "crashed"),
        ("e2", "stop"),
    ]
    summary = result.summary["by_constraint"]["gbnf"]
    assert summary["n_examples"] == 3 and summary["n_crashed"] == 1
    assert summary["perf"]["latency_s"]["n"] == 2  # nothing decoded: no timing


def test_an_arm_gives_up_after_max_crashes_and_the_next_arm_runs(tmp_path: Path) -> None:
    cfg = RunSettings(
        out=tmp_path / "run", warmup=False, constraints=("none", "gbnf", "mask"), max_crashes=1
    )
    with pytest.raises(UserError, match=r"gave up on fake-model, gbnf after 1 failed.*SIGSEGV"):
        execute(
            cfg,
            model(),
            EchoTask(),
            examples(),
            {"path": "mem"},
            worker_factory=crashing_gbnf_factory,
        )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "crashed"
    assert {m: a["status"] for m, a in manifest["arms"].items()} == {
        "none": "completed",
        "gbnf": "crashed",
        "mask": "completed",
    }
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["by_constraint"]["gbnf"]["n_examples"] == 2  # e2 was never tried
    assert summary["by_constraint"]["mask"]["n_examples"] == 3


def test_token_mask_reads_llguidance_bit_order() -> None:
    mask = TokenMask(40)
    words = mask.words.view(np.uint32)
    words[:] = 0
    words[0] = (1 << 3) | (1 << 31)
    words[1] = 1 << 5  # token 37
    assert np.flatnonzero(mask.allowed()).tolist() == [3, 31, 37]
    assert not mask.allows_only(3)
    words[:] = 0
    words[1] = 1 << 5
    assert mask.allows_only(37) and not mask.allows_only(3)
