"""The schemas family: valid JSON and schema compliance as JSONSchemaBench judges them
(Draft 2020-12 whatever `$schema` says, formats asserted), and schemas no validator can
use scored 0 with the reason, never an error."""

from __future__ import annotations

from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.metrics import get_family
from edgebench.scoring.parse import parse_json_output

IPV4 = {"type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"}}}
# Draft 4's boolean exclusiveMaximum is not a valid Draft 2020-12 schema.
DRAFT4 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
}


def evaluate(text: str, schema: Any, **params: str) -> Any:
    return get_family("schemas", params).evaluate(parse_json_output(text), None, schema)


def test_compliant_non_compliant_and_unparsable() -> None:
    assert evaluate('{"ip": "10.0.0.1"}', IPV4).scores == {"schema_compliance": 1, "valid_json": 1}
    wrong = evaluate('{"ip": 7}', IPV4)
    assert wrong.scores == {"schema_compliance": 0, "valid_json": 1}
    assert wrong.details["schema_errors"] == ["$.ip: 7 is not of type 'string'"]
    assert evaluate("no json here", IPV4).scores == {"schema_compliance": 0, "valid_json": 0}


def test_formats_are_asserted_as_the_benchmark_does() -> None:
    assert evaluate('{"ip": "999.1.1.1"}', IPV4).scores["schema_compliance"] == 0
    lenient = evaluate('{"ip": "999.1.1.1"}', IPV4, check_formats="false")
    assert lenient.scores["schema_compliance"] == 1


def test_every_schema_is_draft_2020_12_unless_asked_for_the_declared_draft() -> None:
    result = evaluate('{"n": 4}', DRAFT4)
    assert result.scores == {"schema_compliance": 0, "valid_json": 1}
    assert "invalid JSON Schema" in result.details["schema_unusable"]
    assert evaluate('{"n": 4}', DRAFT4, dialect="declared").scores["schema_compliance"] == 1
    assert evaluate('{"n": 5}', DRAFT4, dialect="declared").scores["schema_compliance"] == 0


def test_a_reference_outside_the_schema_scores_zero_with_the_reason() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}
    result = evaluate('{"a": 1}', schema)
    assert result.scores == {"schema_compliance": 0, "valid_json": 1}
    assert "points outside the schema" in result.details["schema_unusable"]


def test_an_unknown_dialect_is_a_one_line_error() -> None:
    with pytest.raises(UserError, match=r"schemas.dialect: '4' \(known: 2020-12, 7, declared\)"):
        get_family("schemas", {"dialect": "4"})
