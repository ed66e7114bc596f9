import json

import pytest

from edgebench.scoring.edgejson import (
    HIGHER_IS_BETTER,
    FieldScores,
    field_scores,
    json_exact,
    schema_compliance,
    score_edgejson,
)
from edgebench.scoring.parse import parse_json_output
from edgebench.scoring.schema import SchemaChecker

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "active": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
EXPECTED = {"name": "Ann", "age": 30, "active": True, "tags": ["a", "b"]}
CHECKER = SchemaChecker(SCHEMA, source="person.json")


def test_json_exact():
    assert json_exact({"age": 30.0, "name": "Ann"}, {"name": "Ann", "age": 30}) == 1
    assert json_exact({"active": 1}, {"active": True}) == 0
    assert json_exact({"tags": ["b", "a"]}, {"tags": ["a", "b"]}) == 0
    assert json_exact({}, {}) == 1


def test_field_precision_recall_arithmetic():
    pred = {"a": 1, "b": 2, "c": 3}
    expected = {"a": 1, "b": 5, "d": 4, "e": 5}
    scores = field_scores(pred, expected)
    assert scores.precision == pytest.approx(1 / 3)
    assert scores.recall == pytest.approx(1 / 4)
    assert scores.f1 == pytest.approx(2 / 7)


def test_field_scores_perfect_and_key_order():
    assert field_scores(dict(reversed(EXPECTED.items())), EXPECTED) == FieldScores(1.0, 1.0, 1.0)


def test_field_values_use_json_equality():
    scores = field_scores({"active": 1, "age": 30.0}, {"active": True, "age": 30})
    assert (scores.precision, scores.recall) == (0.5, 0.5)


def test_nested_field_values_must_match_entirely():
    scores = field_scores(
        {"x": {"a": 1, "b": 2}, "l": [1, 2]}, {"x": {"a": 1, "b": 3}, "l": [2, 1]}
    )
    assert scores == FieldScores(0.0, 0.0, 0.0)


@pytest.mark.parametrize("pred", [None, [EXPECTED], "Ann", 30, True])
def test_non_object_output_scores_zero(pred):
    assert field_scores(pred, EXPECTED) == FieldScores(0.0, 0.0, 0.0)


def test_empty_objects_score_zero_as_in_the_paper():
    assert field_scores({}, {}) == FieldScores(0.0, 0.0, 0.0)
    assert field_scores({}, EXPECTED) == FieldScores(0.0, 0.0, 0.0)
    assert field_scores({"name": "Ann"}, {}) == FieldScores(0.0, 0.0, 0.0)


def test_schema_compliance():
    assert schema_compliance(parse_json_output('{"name": "A", "age": 1}'), CHECKER) == 1
    assert schema_compliance(parse_json_output('{"name": "A"}'), CHECKER) == 0
    assert schema_compliance(parse_json_output("not json"), CHECKER) == 0


def test_score_record_for_a_perfect_fenced_answer():
    record = score_edgejson(f"```json\n{json.dumps(EXPECTED)}\n```", EXPECTED, CHECKER)
    assert record == {
        "parse": {"ok": True, "path": "fenced_json", "error": None},
        "parsed": EXPECTED,
        "scores": {
            "valid_json": 1,
            "json_exact": 1,
            "field_precision": 1.0,
            "field_recall": 1.0,
            "field_f1": 1.0,
            "schema_compliance": 1,
        },
        "schema_errors": [],
    }
    assert set(record["scores"]) == set(HIGHER_IS_BETTER)
    assert all(HIGHER_IS_BETTER.values())


def test_score_unparseable():
    record = score_edgejson("Sorry, I can't.", EXPECTED, CHECKER)
    assert record["parse"]["ok"] is False
    assert record["parse"]["path"] == "none"
    assert record["parse"]["error"]
    assert record["parsed"] is None
    assert set(record["scores"].values()) == {0}
    assert record["schema_errors"] == []


def test_score_compliant_but_wrong_values():
    record = score_edgejson('{"name": "Bob", "age": 30}', EXPECTED, CHECKER)
    scores = record["scores"]
    assert (scores["schema_compliance"], scores["json_exact"]) == (1, 0)
    assert (scores["field_precision"], scores["field_recall"]) == (0.5, 0.25)
    assert scores["field_f1"] == pytest.approx(1 / 3)


def test_score_wrong_values_and_types():
    record = score_edgejson('{"name": "Bob", "age": 30, "active": 1}', EXPECTED, CHECKER)
    scores = record["scores"]
    assert (scores["valid_json"], scores["json_exact"]) == (1, 0)
    assert scores["schema_compliance"] == 0  # active: 1 is not a boolean
    assert record["schema_errors"] == ["$.active: 1 is not of type 'boolean'"]
    assert scores["field_precision"] == pytest.approx(1 / 3)
    assert scores["field_recall"] == pytest.approx(1 / 4)


def test_score_keeps_three_schema_errors():
    record = score_edgejson('{"a": 1, "b": 2, "c": 3, "d": 4}', EXPECTED, CHECKER)
    assert len(record["schema_errors"]) == 3
    assert record["scores"]["schema_compliance"] == 0


def test_score_non_object_output():
    record = score_edgejson('["Ann", 30]', EXPECTED, CHECKER)
    assert record["parse"]["path"] == "whole"
    assert record["scores"]["valid_json"] == 1
    assert record["scores"]["field_f1"] == 0
    assert record["scores"]["schema_compliance"] == 0


def test_score_deep_output_does_not_crash():
    record = score_edgejson("[" * 50_000, EXPECTED, CHECKER)
    assert record["parse"]["error"] == "JSON refused: JSON nested too deeply"
    assert record["scores"]["valid_json"] == 0
