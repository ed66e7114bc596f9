"""`--parse reference`: the published scorers' extractions, quirks included, next to the
lenient one; valid JSON is the answer's own top-level value in both modes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.scoring.extract import (
    LENIENT,
    REFERENCES,
    check_parse_mode,
    describe_parse,
    extraction_for,
)
from edgebench.scoring.parse import parse_json_output
from edgebench.scoring.reference import (
    deepjsoneval_parse,
    edgejson_harness_parse,
    jsonschemabench_parse,
)
from edgebench.tasks import reference_of

OBJ = {"title": "Dune", "year": 1965, "tags": ["sf", "desert"]}
BARE = json.dumps(OBJ)
BROKEN = '{"title": "Dune", "year": '

# Answers a model gives, each named: the cases the issue lists and their neighbours.
CASES: dict[str, str] = {
    "bare": BARE,
    "bare, whitespace": f"\n  {BARE}\n",
    "prose around bare JSON": f"Here is the JSON: {BARE} Hope this helps.",
    "text after the JSON": f"{BARE}\nThe year is the publication year.",
    "```json fence in prose": f"Sure:\n```json\n{BARE}\n```\nDone.",
    "untagged fence": f"Sure:\n```\n{BARE}\n```",
    "upper-case fence": f"Sure:\n```JSON\n{BARE}\n```",
    "two ```json blocks, last broken": f"```json\n{BARE}\n```\nFixed:\n```json\n{BROKEN}\n```",
    "two ```json blocks, both fine": f'```json\n{{"v": 1}}\n```\nBetter:\n```json\n{BARE}\n```',
    "unclosed ```json fence": f"```json\n{BARE}\n",
    "fence after bare JSON": f"{BARE}\n```",
    "cut off": '{"title": "Dune", "tags": ["sf"], "cast": [{"name": "Paul"}, {"na',
    "cut off in a fence": '```json\n{"genres": ["Movie"], "cast": [""], "plot": "A bo',
    "deep object in prose": 'Answer: {"a": {"b": {"c": 1}}, "d": 2} ok',
    "empty": "",
    "a JSON string": '"just text"',
}


def deepjsoneval_oracle(raw: str) -> Any:
    """DeepJSONEval's scorer (utils.py json_evaluation_new), restated: the text after the
    last ```json, up to the next ```, must be JSON. None when it is not."""
    body = raw.split("```json")[-1]
    body = body.split("```")[0]
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return None


_HARNESS = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", re.DOTALL)


def harness_oracle(raw: str) -> Any:
    """The EdgeJSON harness (eval.py extract_json_from_text), restated: the whole text,
    else the first brace-regex match that decodes."""
    try:
        return json.loads(raw.strip())
    except json.JSONDecodeError:
        pass
    for candidate in _HARNESS.findall(raw):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


def jsonschemabench_oracle(raw: str) -> Any:
    try:
        return json.loads(raw.strip())
    except json.JSONDecodeError:
        return None


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize(
    ("parse", "oracle"),
    [
        (deepjsoneval_parse, deepjsoneval_oracle),
        (edgejson_harness_parse, harness_oracle),
        (jsonschemabench_parse, jsonschemabench_oracle),
    ],
)
def test_each_reference_extraction_takes_what_its_scorer_takes(
    name: str, parse: Any, oracle: Any
) -> None:
    raw = CASES[name]
    result = parse(raw)
    expected = oracle(raw)
    assert result.ok == (expected is not None), (name, result)
    assert result.value == expected
    assert (result.error is None) == result.ok


# (case, DeepJSONEval's path, or None when it takes nothing)
DEEPJSONEVAL_PATHS = {
    "bare": "whole",
    "prose around bare JSON": None,
    "text after the JSON": None,
    "```json fence in prose": "fenced_json",
    "untagged fence": None,  # the prose before the first ``` is what it decodes
    "upper-case fence": None,
    "two ```json blocks, last broken": None,  # only the last block counts
    "two ```json blocks, both fine": "fenced_json",
    "unclosed ```json fence": "fenced_json",
    "fence after bare JSON": "before_fence",
}


@pytest.mark.parametrize(("name", "path"), DEEPJSONEVAL_PATHS.items())
def test_deepjsoneval_reference_and_lenient_differ_where_the_issue_says(
    name: str, path: str | None
) -> None:
    raw = CASES[name]
    reference = extraction_for("reference", reference_of("deepjson")).parse(raw)
    lenient = extraction_for("lenient", reference_of("deepjson")).parse(raw)
    assert lenient.ok and lenient.valid_json  # the lenient rule takes every one of them
    assert reference.path == (path or "none")
    assert reference.ok == (path is not None)
    assert reference.valid_json  # valid JSON does not depend on the mode


def test_deepjsoneval_reference_takes_the_last_block_the_lenient_rule_the_last_good_one() -> None:
    raw = CASES["two ```json blocks, both fine"]
    assert deepjsoneval_parse(raw).value == OBJ
    assert parse_json_output(raw).value == OBJ
    broken_last = CASES["two ```json blocks, last broken"]
    assert parse_json_output(broken_last).value == OBJ
    assert "fenced_json" in str(deepjsoneval_parse(broken_last).error)


def test_the_edgejson_harness_takes_an_inner_object_of_a_deep_answer_in_prose() -> None:
    raw = CASES["deep object in prose"]
    reference = extraction_for("reference", reference_of("edgejson")).parse(raw)
    # Its pattern matches objects nested two deep at most: the outer object is skipped.
    assert (reference.ok, reference.path) == (True, "brace_regex")
    assert reference.value == {"b": {"c": 1}}
    assert reference.valid_json  # the answer's own value is complete JSON
    lenient = parse_json_output(raw)
    assert lenient.value == {"a": {"b": {"c": 1}}, "d": 2}


CUT_OFF = [
    CASES["cut off"],
    CASES["cut off in a fence"],
    '{"items": [{"a": 1}, {"a": 2}, {"a":',
    '{"genres": ["Movie"], "cast": [""], "plot": "A',
    'Here you go: {"a": {"b": 1}, "c": [1, 2], "d": {"e"',
    '[{"name": "Ann"}, {"name": "Bo"}, {"na',
    '```json\n{"a": [1, 2], "b": {"c": true}, "d": ',
]


@pytest.mark.parametrize("raw", CUT_OFF)
@pytest.mark.parametrize("task", ["deepjson", "edgejson", "schemas", "roundtrip"])
@pytest.mark.parametrize("mode", ["lenient", "reference"])
def test_a_cut_off_answer_is_never_valid_json(raw: str, task: str, mode: str) -> None:
    """Its complete inner arrays and objects are fragments, not the answer."""
    result = extraction_for(mode, reference_of(task)).parse(raw)
    assert not result.valid_json
    if mode == "lenient":
        assert not result.ok and result.value is None


def test_the_harness_scores_a_fragment_of_a_cut_off_answer_but_it_is_not_valid_json() -> None:
    result = extraction_for("reference", reference_of("edgejson")).parse(CASES["cut off"])
    assert (result.ok, result.path, result.value) == (True, "brace_regex", {"name": "Paul"})
    assert result.valid_json is False


def test_modes_and_tasks() -> None:
    assert extraction_for("lenient", reference_of("deepjson")) is LENIENT
    assert extraction_for("reference", reference_of("deepjson")) is REFERENCES["deepjsoneval"]
    assert extraction_for("reference", reference_of("schemas")).name == "jsonschemabench"
    assert extraction_for("reference", reference_of("roundtrip")) is LENIENT  # no published scorer
    assert describe_parse("lenient", "edgejson", reference_of("edgejson")) == "lenient"
    assert (
        describe_parse("reference", "edgejson", reference_of("edgejson"))
        == "reference (edgejson-harness)"
    )
    assert describe_parse("reference", "roundtrip", reference_of("roundtrip")) == (
        "reference (no published scorer for roundtrip: lenient)"
    )


@pytest.mark.parametrize("mode", ["strict", "", "Reference"])
def test_an_unknown_mode_is_a_one_line_error(mode: str) -> None:
    with pytest.raises(UserError, match=r"^--parse: unknown mode .* \(use lenient or reference\)$"):
        check_parse_mode(mode)


@pytest.mark.parametrize(
    "raw", ["```json", "``````json```", "{" * 50 + "}" * 49, '{"a": NaN}', "\ud800", "[" * 10_000]
)
@pytest.mark.parametrize(
    "parse", [deepjsoneval_parse, edgejson_harness_parse, jsonschemabench_parse]
)
def test_reference_extractions_never_raise(raw: str, parse: Any) -> None:
    assert parse(raw).ok is False
