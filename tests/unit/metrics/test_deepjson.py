"""The DeepJSONEval family: scores and details of raw outputs through the one scoring path,
and its own summary table, key matching per leaf element type (the paper's Figure 8)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgebench.metrics import get_family
from edgebench.metrics.base import Scored
from edgebench.metrics.score import ScoredOutput, score_output
from edgebench.scoring.parse import parse_json_output
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.movie import MOVIE, MOVIE_SCHEMA
from tests.helpers.run_fake import RunFake

PARTIAL_RATING = dict(MOVIE, Ratings=[MOVIE["Ratings"][0], {"Source": "Metacritic", "Score": 8}])


def score(raw: str) -> ScoredOutput:
    return score_output([get_family("deepjson")], raw, MOVIE, MOVIE_SCHEMA)


def test_invalid_output_scores_zero_on_all_three() -> None:
    for raw in ("", "no JSON here", '{"Year": 2023,', "[1, 2]"):
        scores = score(raw).scores["deepjson"]
        assert (scores["syntax"], scores["key_matching"], scores["strict"]) == (0, 0.0, 0)


def test_output_that_breaks_the_schema_scores_zero_even_when_keys_match() -> None:
    result = score(json.dumps(dict(MOVIE, Year="2023")))  # key matching alone: 3/4
    assert result.parse.ok and result.scores["deepjson"]["valid_json"] == 1
    assert result.scores["deepjson"] == {
        "syntax": 0,
        "key_matching": 0.0,
        "strict": 0,
        "valid_json": 1,
    }
    details = result.details["deepjson"]
    assert details["schema_errors"] == ["$.Year: '2023' is not of type 'number'"]
    assert details["element_scores"]  # every type still counted, with score 0
    assert all(v["key_matching"] == 0 for v in details["element_scores"].values())


def test_valid_output_gets_syntax_key_matching_and_strict() -> None:
    perfect = score("```json\n" + json.dumps(MOVIE) + "\n```")
    assert perfect.parse.path == "fenced_json"
    assert perfect.scores["deepjson"] == {
        "syntax": 1,
        "key_matching": 1.0,
        "strict": 1,
        "valid_json": 1,
    }
    # the second rating's score is wrong: Ratings = (1 + 1/2) / 2, km = (1+1+1+0.75) / 4
    scores = score(json.dumps(PARTIAL_RATING)).scores["deepjson"]
    assert scores["syntax"] == 1 and scores["strict"] == 0
    assert scores["key_matching"] == pytest.approx(3.75 / 4)


def test_evaluate_explains_with_schema_errors_and_element_scores() -> None:
    family = get_family("deepjson")
    evaluation = family.evaluate(parse_json_output(json.dumps(PARTIAL_RATING)), MOVIE, MOVIE_SCHEMA)
    assert set(evaluation.details) == {"schema_errors", "element_scores"}
    assert evaluation.details["schema_errors"] == []
    assert evaluation.details["element_scores"] == {
        "number": {"fields": 3, "key_matching": pytest.approx(2 / 3)},  # Year, 2 Scores
        "boolean": {"fields": 1, "key_matching": 1.0},
        "enum": {"fields": 2, "key_matching": 1.0},
        "string_list": {"fields": 1, "key_matching": 1.0},
        "object_list": {"fields": 1, "key_matching": 0.75},
    }


# --- the element_type table of a summary ------------------------------------------------

LIST_SCHEMA = {
    "type": "object",
    "properties": {
        "Title": {"type": "string"},
        "Scores": {"type": "array", "items": {"type": "number"}},
    },
}
LIST_TRUTH = {"Title": "Dune", "Scores": [7, 8]}


def scored(raw: str, expected: Any = MOVIE, schema: Any = MOVIE_SCHEMA) -> Scored:
    evaluation = get_family("deepjson").evaluate(parse_json_output(raw), expected, schema)
    return Scored(evaluation.scores, evaluation.details, {})


def test_breakdown_pools_fields_of_each_element_type_in_figure_8_order() -> None:
    samples = [
        scored(json.dumps(MOVIE)),  # every field right
        scored(json.dumps(PARTIAL_RATING)),  # one of three numbers wrong
        scored("not JSON"),  # fails the gate: its fields count, with 0
        scored('{"Title": "Dune", "Scores": [7, 9]}', LIST_TRUTH, LIST_SCHEMA),
    ]
    (name, table), *others = get_family("deepjson").breakdowns(samples).items()
    assert name == "element_type" and not others
    assert list(table) == ["string", "number", "boolean", "enum", "string_list", "number_list",
                           "object_list"]  # fmt: skip
    # number: 3 fields in each movie, 3 + 2 + 0 of the 9 right; `n` counts examples
    assert table["number"] == {"n": 3, "fields": 9, "key_matching": pytest.approx(5 / 9)}
    # enum: 2 fields per movie, all right in the first two
    assert table["enum"] == {"n": 3, "fields": 6, "key_matching": pytest.approx(4 / 6)}
    # object_list: 1 + 0.75 + 0 over three lists
    assert table["object_list"] == {"n": 3, "fields": 3, "key_matching": pytest.approx(1.75 / 3)}
    # only the list example has these: Jaccard {7, 8} vs {7, 9} = 1/3
    assert table["string"] == {"n": 1, "fields": 1, "key_matching": 1.0}
    assert table["number_list"] == {"n": 1, "fields": 1, "key_matching": pytest.approx(1 / 3)}


def test_breakdown_weights_examples_by_their_number_of_fields() -> None:
    # One example with 3 number fields all wrong, one with 1 number field right:
    # pooled 1/4, where a mean of per-example scores would say 1/2.
    three = {"type": "object", "properties": {k: {"type": "number"} for k in "abc"}}
    one = {"type": "object", "properties": {"a": {"type": "number"}}}
    samples = [
        scored('{"a": 0, "b": 0, "c": 0}', {"a": 1, "b": 2, "c": 3}, three),
        scored('{"a": 1}', {"a": 1}, one),
    ]
    table = get_family("deepjson").breakdowns(samples)["element_type"]
    assert table == {"number": {"n": 2, "fields": 4, "key_matching": 0.25}}


def test_no_element_scores_means_no_table() -> None:
    family = get_family("deepjson")
    assert family.breakdowns([]) == {}
    # samples scored without details (an older run, another family's record)
    assert family.breakdowns([Scored({"syntax": 1}, {}, {"depth": "3"})]) == {}
    assert get_family("edgejson").breakdowns([scored(json.dumps(MOVIE))]) == {}


def test_a_run_summary_holds_the_element_type_table(run_fake: RunFake) -> None:
    # deepjson as an extra family of the echo task: each example expects {"a": 1}
    result = run_fake([RIGHT, WRONG, "nope"], metrics=("deepjson",))
    (arm,) = result.summary.arms
    groups = arm.families["deepjson"].groups
    assert groups["element_type"] == {
        "number": {"n": 3, "fields": 3, "key_matching": pytest.approx(1 / 3)}
    }
    assert "element_type" not in arm.families["edgejson"].groups
    assert set(groups) == {"complexity", "schema", "element_type"}
