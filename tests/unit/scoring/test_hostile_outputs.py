"""Model outputs and schema patterns from strangers: a pathological pattern is matched in
bounded time and reported as not checked, hostile output costs its own sample, and a
scorer that fails costs its sample, never the run."""

from __future__ import annotations

from typing import Any

import pytest

from edgebench.io import read_jsonl
from edgebench.scoring.patterns import PATTERN_TIMEOUT_S
from edgebench.scoring.schema import SchemaChecker
from edgebench.tasks.base import Example
from edgebench.tasks.edgejson import EdgeJSONTask
from tests.helpers.faults import break_edgejson_scoring
from tests.helpers.run_fake import RunFake

PATHOLOGICAL = "^(a+)+$"
# What a match cut at the library's own bound says (scoring/patterns.py).
STOPPED = f"not checked against {PATHOLOGICAL!r}: matching stopped after {PATTERN_TIMEOUT_S:g} s"


def test_a_pathological_pattern_is_checked_in_bounded_time() -> None:
    checker = SchemaChecker({"type": "string", "pattern": PATHOLOGICAL}, source="s.json")
    # Backtracking over 100,000 a's would take longer than the universe has existed:
    # the match is stopped at its bound and the value reported as not checked.
    errors = checker.errors("a" * 100_000 + "!")
    assert len(errors) == 1 and STOPPED in errors[0]
    assert not checker.is_valid("a" * 100_000 + "!")
    # Ordinary strings still match or fail as usual.
    assert checker.errors("aaaa") == []
    assert "does not match" in checker.errors("ab")[0]


def test_pattern_properties_and_additional_properties_are_bounded() -> None:
    schema = {
        "patternProperties": {PATHOLOGICAL: {"type": "integer"}},
        "additionalProperties": False,
    }
    checker = SchemaChecker(schema, source="s.json")
    errors = checker.errors({"a" * 50_000 + "!": 1})
    # Both keywords match the key, and each is cut at the bound.
    assert len(errors) == 2 and all(STOPPED in e for e in errors)
    assert checker.errors({"aaa": 1}) == []
    assert checker.errors({"aaa": "x"}) == ["$.aaa: 'x' is not of type 'integer'"]
    assert checker.errors({"b": 1}) == ["$: 'b' does not match any of the regexes: '^(a+)+$'"]


def edgejson_examples(n: int, schema: dict[str, Any]) -> list[Example]:
    return [Example(f"e{i}", "text", "thing", schema, {"a": "x"}, {}) for i in range(n)]


def test_hostile_model_outputs_are_per_sample_errors(run_fake: RunFake) -> None:
    outputs = [
        "[" * 5000 + "]" * 5000,  # deeper than the parser allows
        "[" * 500 + "]" * 500,  # parses; the schema says object
        '{"a": "\\ud800"}',  # a lone surrogate: valid JSON, not encodable as UTF-8
        '{"a": NaN}',
        '{"a": ' + "9" * 5000 + "}",
        '{"a": "\ufffd\ufffd"}',  # what invalid UTF-8 from the runtime decodes to
        '{"a": "' + "a" * 20_000 + '!"}',  # pathological pattern
        '{"a": "x"}',
    ]
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": PATHOLOGICAL}}}
    # The fake answers verbatim: each output has fewer than 10 words (tokens).
    result = run_fake(
        outputs,
        task_impl=EdgeJSONTask(),
        examples=edgejson_examples(len(outputs), schema),
        max_tokens=10,
    )
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert [s["id"] for s in samples] == [f"e{i}" for i in range(8)]
    # Complete JSON values end their answers (json_complete); what the parser refuses
    # (too deep, NaN, too many digits) never completes one.
    assert all(s["error"] is None for s in samples)
    assert [s["finish_reason"] == "stop" for s in samples] == [
        True,
        False,
        False,
        True,
        True,
        False,
        False,
        False,
    ]
    deep, deep_ok, surrogate, nan, digits, replaced, slow, fine = samples
    assert deep["parse"]["error"] == "JSON refused: JSON nested too deeply"
    assert deep_ok["parse"]["ok"]
    assert deep_ok["scores"]["edgejson"]["schema_compliance"] == 0
    assert surrogate["parsed"] == {"a": "\ud800"}  # written escaped, read back the same
    assert nan["parse"]["error"] == "JSON refused: NaN is not valid JSON"
    assert digits["parse"]["error"] == "JSON refused: integer with 5000 digits is too long"
    assert replaced["parse"]["ok"]
    assert STOPPED in slow["score_details"]["edgejson"]["schema_errors"][0]
    assert slow["scores"]["edgejson"]["schema_compliance"] == 0
    assert fine["scores"]["edgejson"]["json_exact"] == 1
    assert result.summary.status == "completed"
    (arm,) = result.summary.arms
    assert arm.n_examples == 8 and arm.n_errors == 0


def test_a_scorer_that_fails_costs_its_sample_not_the_run(
    run_fake: RunFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    break_edgejson_scoring(
        monkeypatch, {"a": "boom"}, RecursionError("maximum recursion depth exceeded")
    )
    result = run_fake(
        ['{"a": "x"}', '{"a": "boom"}', '{"a": "x"}'],
        task_impl=EdgeJSONTask(),
        examples=edgejson_examples(3, {"type": "object"}),
        max_tokens=10,
    )
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert samples[1]["error"] == "scoring failed: RecursionError: maximum recursion depth exceeded"
    assert samples[1]["scores"] == {} and samples[1]["raw_output"] == '{"a": "boom"}'
    assert samples[0]["scores"]["edgejson"]["json_exact"] == 1
    assert samples[2]["scores"]["edgejson"]["json_exact"] == 1
    assert result.summary.status == "completed"
    (arm,) = result.summary.arms
    assert arm.n_examples == 3 and arm.n_errors == 1
