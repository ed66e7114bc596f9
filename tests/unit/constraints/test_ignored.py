"""Every keyword an engine reads past is listed, where it is: the GBNF converter (oneOf
as anyOf, patternProperties, minProperties ... of issue 25's 143 schemas), outlines-core
and llguidance compiled leniently. Each case is what the engine's own code does with it
(see edgebench/constraints/ignored.py)."""

from __future__ import annotations

from typing import Any

import pytest

from edgebench.constraints.guard import GUARDED_KEYWORDS
from edgebench.constraints.ignored import gbnf_ignored, llguidance_ignored, outlines_ignored

GBNF_FORMATS = frozenset({"date", "time", "date-time", "uuid"})


@pytest.mark.parametrize(
    ("schema", "listed"),
    [
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, ["$: oneOf (as anyOf)"]),
        (
            {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {}}},
            ["$: patternProperties"],
        ),
        (
            {"type": "object", "properties": {"a": {}}, "minProperties": 1, "maxProperties": 3},
            ["$: minProperties, maxProperties"],
        ),
        # siblings of anyOf, $ref and a list of types are never read
        (
            {"type": "object", "properties": {"a": {}}, "anyOf": [{"required": ["a"]}]},
            ["$: type, properties", "$.anyOf[0]: required"],
        ),
        (
            {"$ref": "#/$defs/s", "maxLength": 3, "$defs": {"s": {"type": "string"}}},
            ["$: maxLength"],
        ),
        ({"type": ["string", "null"], "maxLength": 5}, ["$: maxLength"]),
        # a pattern wins over lengths and formats; unknown formats are read past
        ({"type": "string", "pattern": "^a+$", "minLength": 2}, ["$: minLength"]),
        ({"type": "string", "format": "email"}, ["$: format email"]),
        ({"type": "string", "format": "uuid4"}, []),
        # lengths are read only on a string typed as such
        ({"maxLength": 3, "properties": {}}, ["$: maxLength"]),
        (
            {
                "type": "array",
                "items": {"type": "integer"},
                "uniqueItems": True,
                "contains": {"const": 1},
            },
            ["$: uniqueItems, contains"],
        ),
        ({"type": "array", "items": [{}, {}], "minItems": 2}, ["$: minItems"]),
        ({"type": "object", "minProperties": 1}, ["$: minProperties"]),
        ({"type": "object", "additionalProperties": True}, []),
        (
            {"type": "object", "properties": {"a": {}}, "not": {}, "if": {}, "then": {}},
            ["$: not, if, then"],
        ),
        (
            {"type": "object", "properties": {"a": {}}, "dependencies": {"a": ["b"]}},
            ["$: dependencies"],
        ),
        # allOf: only its branches' properties are merged
        (
            {
                "allOf": [
                    {"properties": {"a": {"type": "integer", "minimum": 1}}, "minProperties": 1}
                ]
            },
            ["$: allOf[0] minProperties", "$.a: minimum"],
        ),
        (
            {
                "allOf": [{"$ref": "#/$defs/base"}],
                "$defs": {"base": {"properties": {"a": {}}, "maxProperties": 2}},
            },
            ["#/$defs/base: maxProperties"],
        ),
        # a local ref is followed once (recursive schemas end)
        (
            {
                "$ref": "#/$defs/node",
                "$defs": {
                    "node": {
                        "type": "object",
                        "properties": {"next": {"$ref": "#/$defs/node"}},
                        "propertyNames": {"maxLength": 2},
                    }
                },
            },
            ["#/$defs/node: propertyNames"],
        ),
        # annotations are not keywords
        ({"type": "string", "title": "t", "description": "d", "default": "x", "examples": []}, []),
    ],
)
def test_gbnf_lists_what_the_converter_reads_past(
    schema: dict[str, Any], listed: list[str]
) -> None:
    assert gbnf_ignored(schema, GBNF_FORMATS) == listed


def test_the_guarded_keywords_are_listed_where_the_guard_cannot_judge() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0},
            "m": {"anyOf": [{"type": "integer", "maximum": 3}, {"type": "null"}]},
        },
    }
    assert gbnf_ignored(schema, GBNF_FORMATS, GUARDED_KEYWORDS) == ["$.m.anyOf[0]: maximum"]
    assert gbnf_ignored(schema, GBNF_FORMATS) == ["$.n: minimum", "$.m.anyOf[0]: maximum"]


@pytest.mark.parametrize(
    ("schema", "listed"),
    [
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, ["$: oneOf (as anyOf)"]),
        # properties win: everything else at that level is read past
        (
            {"properties": {"a": {}}, "minProperties": 1, "patternProperties": {}, "anyOf": []},
            ["$: minProperties, patternProperties, anyOf"],
        ),
        # a type object (no properties) reads min/maxProperties
        ({"type": "object", "minProperties": 1, "propertyNames": {}}, ["$: propertyNames"]),
        # a string's length wins over its pattern
        ({"type": "string", "minLength": 1, "pattern": "^a$"}, ["$: pattern"]),
        (
            {"type": "array", "items": {"type": "number", "multipleOf": 2}, "uniqueItems": True},
            ["$: uniqueItems", "$[]: multipleOf"],
        ),
        ({"type": "integer", "minimum": 1, "maximum": 9}, ["$: minimum, maximum"]),
    ],
)
def test_outlines_lists_what_outlines_core_reads_past(
    schema: dict[str, Any], listed: list[str]
) -> None:
    assert outlines_ignored(schema) == listed


def test_llguidance_compiled_leniently_lists_the_refused_keys_where_they_are() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "kind": {"oneOf": [{"const": "a"}, {"type": "string"}]},
            "host": {"type": "string", "format": "hostname"},
            "site": {"type": "string", "format": "iri"},
        },
        "propertyNames": {"maxLength": 8},
    }
    refused = ["uniqueItems", "propertyNames"]
    assert llguidance_ignored(schema, refused, frozenset()) == [
        "$: propertyNames",
        "$.tags: uniqueItems",
        "$.kind: oneOf (as anyOf)",
        "$.site: format iri",
    ]
    assert llguidance_ignored(schema, refused, GUARDED_KEYWORDS)[1:2] == [
        "$.kind: oneOf (as anyOf)"
    ]
