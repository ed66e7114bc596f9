"""EdgeJSON scores as pure functions (JSONExact, field P/R/F1, schema compliance); the
family that stores them per sample is tested in tests/unit/metrics/test_edgejson.py."""

import pytest

from edgebench.scoring.edgejson import (
    FieldScores,
    edgejson_scores,
    field_scores,
    json_exact,
    schema_compliance,
)
from edgebench.scoring.parse import parse_json_output
from edgebench.scoring.schema import SchemaChecker
from tests.helpers.person import PERSON, PERSON_SCHEMA

CHECKER = SchemaChecker(PERSON_SCHEMA, source="person.json")


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
    assert field_scores(dict(reversed(PERSON.items())), PERSON) == FieldScores(1.0, 1.0, 1.0)


def test_field_values_use_json_equality():
    scores = field_scores({"active": 1, "age": 30.0}, {"active": True, "age": 30})
    assert (scores.precision, scores.recall) == (0.5, 0.5)


def test_nested_field_values_must_match_entirely():
    scores = field_scores(
        {"x": {"a": 1, "b": 2}, "l": [1, 2]}, {"x": {"a": 1, "b": 3}, "l": [2, 1]}
    )
    assert scores == FieldScores(0.0, 0.0, 0.0)


@pytest.mark.parametrize("pred", [None, [PERSON], "Ann", 30, True])
def test_non_object_output_scores_zero(pred):
    assert field_scores(pred, PERSON) == FieldScores(0.0, 0.0, 0.0)


def test_empty_objects_score_zero_as_in_the_paper():
    assert field_scores({}, {}) == FieldScores(0.0, 0.0, 0.0)
    assert field_scores({}, PERSON) == FieldScores(0.0, 0.0, 0.0)
    assert field_scores({"name": "Ann"}, {}) == FieldScores(0.0, 0.0, 0.0)


def test_schema_compliance():
    assert schema_compliance(parse_json_output('{"name": "A", "age": 1}'), CHECKER) == 1
    assert schema_compliance(parse_json_output('{"name": "A"}'), CHECKER) == 0
    assert schema_compliance(parse_json_output("not json"), CHECKER) == 0


@pytest.mark.parametrize(
    "raw",
    ['{"name": "A", "age": 1}', '{"name": "A"}', '{"name": "A", "age": 1, "x": 2}', '["A"]', "no"],
)
def test_scores_agree_with_schema_compliance_without_validating_twice(raw):
    parsed = parse_json_output(raw)
    scored = edgejson_scores(parsed, PERSON, CHECKER)
    compliant = schema_compliance(parsed, CHECKER)
    assert scored["scores"]["schema_compliance"] == compliant
    # the errors kept are the reason for the verdict: present exactly when a parse fails it
    assert bool(scored["schema_errors"]) == (parsed.ok and not compliant)
