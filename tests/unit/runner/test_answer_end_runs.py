"""The answer-ending policies in whole runs on the fake backend: what the samples,
manifest and summary record, side by side with the raw behaviour, and the one-line errors
of the options."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.constraints import parse_modes
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from tests.helpers.cli import cli_error
from tests.helpers.constraints import NESTED_SCHEMA, examples, per_mode
from tests.helpers.gguf_factory import isolate
from tests.helpers.run_fake import RunFake

STRING_A = {"type": "object", "properties": {"a": {"type": "string"}}}
CHATTY = '{"a": 1} I hope this helps, the answer is the JSON above, it has one key'
LOOPING_STRING = '{"a": "' + "la " * 60
LOOPING_ARRAY = '{"a": [1, ' + "1, " * 60
LOOPING_NESTED = '{"order": {"lines": [{"sku": "A1", "qty": 2}, ' + '{"sku": "A1", "qty": 2}, ' * 20


def samples_of(result: object) -> list[dict]:
    return read_jsonl(result.run_dir / "samples.jsonl")  # type: ignore[attr-defined]


def test_a_free_answer_stops_at_its_json_and_the_raw_run_keeps_talking(run_fake: RunFake) -> None:
    stopped = run_fake([CHATTY], n=1)
    raw = run_fake([CHATTY], n=1, stop_at_json=False, out=stopped.run_dir.parent / "raw")
    (cut,), (full,) = samples_of(stopped), samples_of(raw)
    assert (cut["raw_output"], cut["finish_reason"]) == ('{"a": 1}', "json_complete")
    assert (cut["answer_tokens"], cut["tokens_after_answer"]) == (2, 0)
    assert (full["raw_output"], full["finish_reason"]) == (CHATTY, "stop")
    assert full["answer_tokens"] == 2 and full["tokens_after_answer"] == len(CHATTY.split()) - 2
    assert cut["scores"] == full["scores"]
    assert stopped.summary.arms[0].perf.stopped_at_json == 1
    assert raw.summary.arms[0].perf.tokens_after_answer_total == len(CHATTY.split()) - 2
    plan = json.loads((stopped.run_dir / "manifest.json").read_text())["models"][0]["plan"]
    assert plan["decoding"]["answer_end"] == {
        "stop_at_json": True,
        "stop_at_json_applies_to": ["none", "json"],
        "loop_detection": {"max_period": 32, "min_tokens": 32, "min_repeats": 4},
        "close_arms": [],
        "close_tokens": 256,
    }


def test_a_looping_answer_ends_as_a_loop_unless_detection_is_off(run_fake: RunFake) -> None:
    result = run_fake([LOOPING_STRING], n=1, max_tokens=100)
    (sample,) = samples_of(result)
    assert sample["finish_reason"] == "loop" and sample["output_tokens"] == 34
    assert result.summary.arms[0].perf.loops == 1
    off = run_fake(
        [LOOPING_STRING], n=1, max_tokens=50, loop_detection=False, out=result.run_dir.parent / "o"
    )
    assert samples_of(off)[0]["finish_reason"] == "length"


@pytest.mark.parametrize(
    ("output", "schema"),
    [
        (LOOPING_STRING, STRING_A),
        (LOOPING_ARRAY, {"type": "object"}),
        (LOOPING_NESTED, NESTED_SCHEMA),
    ],
    ids=["string", "array", "nested object"],
)
def test_a_close_arm_closes_what_the_plain_arm_leaves_cut_off(
    run_fake: RunFake, output: str, schema: dict
) -> None:
    from edgebench.tasks.base import Example

    ex = [Example("e0", "text", "s", schema, {"a": 1}, {"complexity": "simple"})]
    backends = {"mask": FakeBackend([output]), "mask+close": FakeBackend([output])}
    result = run_fake(
        examples=ex,
        constraints=tuple(parse_modes("mask,mask+close")),
        factory=per_mode(backends),
        max_tokens=60,
    )
    plain, closed = samples_of(result)
    assert plain["finish_reason"] in ("loop", "length") and not plain["closed"]
    assert plain["scores"]["edgejson"]["schema_compliance"] == 0
    assert closed["closed"] and closed["unclosed_output"] == plain["raw_output"]
    assert closed["raw_output"].startswith(plain["raw_output"]) and closed["closing_tokens"] > 0
    jsonschema.validate(json.loads(closed["raw_output"]), schema)
    assert closed["scores"]["edgejson"]["schema_compliance"] == 1
    arm = result.summary.arm("fake-model", "mask+close")
    assert arm is not None and arm.perf.closed == 1
    assert arm.metrics["valid_json"] == 1.0
    plan = json.loads((result.run_dir / "manifest.json").read_text())["models"][0]["plan"]
    assert plan["decoding"]["answer_end"]["close_arms"] == ["mask+close"]


def test_the_close_option_names_the_closing_arms() -> None:
    assert parse_modes("none,mask", close=True) == ["none", "mask+close"]
    assert parse_modes("mask,mask+close") == ["mask", "mask+close"]
    with pytest.raises(UserError, match="closing is built for mask\\+close"):
        parse_modes("gbnf+close")
    with pytest.raises(UserError, match="'gbnf' cannot close answers"):
        parse_modes("gbnf,mask", close=True)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--close"], "--close: give the schema modes to close"),
        (["--constraint", "outlines+close"], "'outlines+close': closing is built for mask+close"),
    ],
)
def test_bad_policy_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    no_network: list[str],
    args: list[str],
    fragment: str,
) -> None:
    isolate(monkeypatch, tmp_path)
    assert fragment in cli_error(capsys, "run", *args)
    assert no_network == []


def test_the_fake_examples_still_decode_under_every_policy(run_fake: RunFake) -> None:
    result = run_fake(examples=examples(), stop_at_json=True, loop_detection=True)
    assert [s["finish_reason"] for s in samples_of(result)] == ["json_complete"] * 3


def test_only_the_close_arms_need_the_closing_room(run_fake: RunFake) -> None:
    """An example that fits the context with its budget but not with the closing room is
    run by the plain arm and skipped, with the real numbers, by the closing arm alone."""
    from edgebench.tasks.base import Example

    short = Example("short", "a b c", "s", STRING_A, {"a": "x"}, {"complexity": "simple"})
    long = Example(
        "long", " ".join(["w"] * 200), "s", STRING_A, {"a": "x"}, {"complexity": "simple"}
    )
    backends = {"none": FakeBackend(['{"a": "x"}'] * 2), "mask+close": FakeBackend(['{"a": "x"}'])}
    result = run_fake(
        examples=[short, long],
        constraints=tuple(parse_modes("none,mask+close")),
        factory=per_mode(backends),
        max_tokens=20,
        close_tokens=50,
        max_context=256,
    )
    samples = samples_of(result)
    plain = {s["id"]: s for s in samples if s["constraint"] == "none"}
    closing = {s["id"]: s for s in samples if s["constraint"] == "mask+close"}
    assert [s["finish_reason"] for s in plain.values()] == ["json_complete"] * 2
    assert closing["short"]["finish_reason"] != "skipped"
    assert closing["long"]["finish_reason"] == "skipped"
    tokens = plain["long"]["prompt_tokens"]  # a skipped sample counts none
    assert closing["long"]["error"] == (
        f"skipped: prompt of {tokens} tokens + max tokens 20 + closing room 50 "
        f"(--close-tokens) = {tokens + 70} does not fit --max-context (256)"
    )
    plan = json.loads((result.run_dir / "manifest.json").read_text())["models"][0]["plan"]
    assert plan["decoding"]["skipped_examples"] == 0
    assert plan["decoding"]["close_skipped_examples"] == 1
    assert plan["n_ctx"] == 256
    assert result.summary.arm("fake-model", "none").n_skipped == 0  # type: ignore[union-attr]
    assert result.summary.arm("fake-model", "mask+close").n_skipped == 1  # type: ignore[union-attr]
