"""The EdgeJSON family on raw outputs, through the one scoring path: what a sample record
stores (parse step, parsed value, scores, schema errors as details)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgebench.metrics import get_family
from edgebench.metrics.score import ScoredOutput, score_output
from edgebench.runfolder.records import ParseStep
from edgebench.scoring.edgejson import HIGHER_IS_BETTER
from tests.helpers.person import PERSON, PERSON_SCHEMA


def score(raw: str, schema: Any = PERSON_SCHEMA, **parameters: Any) -> ScoredOutput:
    return score_output([get_family("edgejson", parameters)], raw, PERSON, schema)


def test_a_perfect_fenced_answer() -> None:
    result = score(f"```json\n{json.dumps(PERSON)}\n```")
    assert result.parse == ParseStep(ok=True, path="fenced_json", error=None)
    assert result.parsed == PERSON
    assert result.scores == {
        "edgejson": {
            "valid_json": 1,
            "json_exact": 1,
            "field_precision": 1.0,
            "field_recall": 1.0,
            "field_f1": 1.0,
            "schema_compliance": 1,
        }
    }
    assert result.details == {"edgejson": {"schema_errors": []}}
    assert set(result.scores["edgejson"]) == set(HIGHER_IS_BETTER)
    # what the manifest records as directions is the scoring module's table
    assert get_family("edgejson").higher_is_better == HIGHER_IS_BETTER
    assert all(HIGHER_IS_BETTER.values())


def test_unparseable() -> None:
    result = score("Sorry, I can't.")
    assert result.parse.ok is False
    assert result.parse.path == "none"
    assert result.parse.error
    assert result.parsed is None
    assert set(result.scores["edgejson"].values()) == {0}
    assert result.details["edgejson"]["schema_errors"] == []


def test_compliant_but_wrong_values() -> None:
    scores = score('{"name": "Bob", "age": 30}').scores["edgejson"]
    assert (scores["schema_compliance"], scores["json_exact"]) == (1, 0)
    assert (scores["field_precision"], scores["field_recall"]) == (0.5, 0.25)
    assert scores["field_f1"] == pytest.approx(1 / 3)


def test_wrong_values_and_types() -> None:
    result = score('{"name": "Bob", "age": 30, "active": 1}')
    scores = result.scores["edgejson"]
    assert (scores["valid_json"], scores["json_exact"]) == (1, 0)
    assert scores["schema_compliance"] == 0  # active: 1 is not a boolean
    assert result.details["edgejson"]["schema_errors"] == ["$.active: 1 is not of type 'boolean'"]
    assert scores["field_precision"] == pytest.approx(1 / 3)
    assert scores["field_recall"] == pytest.approx(1 / 4)


def test_three_schema_errors_are_kept() -> None:
    result = score('{"a": 1, "b": 2, "c": 3, "d": 4}')
    assert len(result.details["edgejson"]["schema_errors"]) == 3
    assert result.scores["edgejson"]["schema_compliance"] == 0


def test_non_object_output() -> None:
    result = score('["Ann", 30]')
    assert result.parse.path == "whole"
    scores = result.scores["edgejson"]
    assert scores["valid_json"] == 1
    assert scores["field_f1"] == 0
    assert scores["schema_compliance"] == 0


def test_deep_output_does_not_crash() -> None:
    result = score("[" * 50_000)
    assert result.parse.error == "JSON refused: JSON nested too deeply"
    assert result.scores["edgejson"]["valid_json"] == 0


def test_formats_are_annotations_unless_check_formats() -> None:
    schema = {"type": "object", "properties": {"sent": {"type": "string", "format": "date"}}}
    output = '{"sent": "yesterday"}'
    assert score(output, schema).scores["edgejson"]["schema_compliance"] == 1
    strict = score(output, schema, check_formats="true")  # as --metric-param gives it
    assert strict.scores["edgejson"]["schema_compliance"] == 0
    assert strict.details["edgejson"]["schema_errors"] == ["$.sent: 'yesterday' is not a 'date'"]
