"""`shortest_completion`: what closes a cut-off answer into a whole value its schema
allows (the text a `+close` arm forces through the engine)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from edgebench.constraints.closing import shortest_completion

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "kind": {"enum": ["person", "company"]},
        "address": {"$ref": "#/$defs/address"},
        "people": {"type": "array", "items": {"$ref": "#/$defs/person"}},
        "joined": {"type": "string", "format": "date"},
    },
    "required": ["name", "age", "tags", "kind", "address"],
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string", "minLength": 3}},
            "required": ["city", "zip"],
        },
        "person": {
            "type": "object",
            "properties": {"n": {"type": "string"}, "m": {"type": ["number", "null"]}},
            "required": ["n", "m"],
        },
    },
}
HEAD = '{"name": "J", "age": 2, "tags": ["x"], "kind": "company", '


@pytest.mark.parametrize(
    ("partial", "completion"),
    [
        (
            "",
            '{"name": "", "age": 1, "tags": [""], "kind": "person", '
            '"address": {"city": "", "zip": "aaa"}}',
        ),
        (
            '{"name": "Joooooooo',
            '", "age": 1, "tags": [""], "kind": "person", "address": {"city": "", "zip": "aaa"}}',
        ),
        (
            '{"name": "J", "age": 200000',
            ', "tags": [""], "kind": "person", "address": {"city": "", "zip": "aaa"}}',
        ),
        (
            '{"name": "J", "age": 2, "tags": ["a", "a", "a',
            '"], "kind": "person", "address": {"city": "", "zip": "aaa"}}',
        ),
        (
            '{"name": "J", "age": 2, "tags": [',
            '""], "kind": "person", "address": {"city": "", "zip": "aaa"}}',
        ),
        (
            '{"name": "J", "age": 2, "tags": ["x"], "kind": "comp',
            'any", "address": {"city": "", "zip": "aaa"}}',
        ),
        (HEAD + '"address": {"ci', 'ty": "", "zip": "aaa"}}'),
        (HEAD + '"address": {"city": "X", ', '"zip": "aaa"}}'),
        (
            HEAD
            + '"address": {"city": "X", "zip": "123"}, "people": [{"n": "a", "m": 1}, {"n": "b"',
            ', "m": null}]}',
        ),
        (HEAD + '"address": {"city": "X", "zip": "123"}, "people": [{"n": "b", "m": 1.', "0}]}"),
        (HEAD + '"address": {"city": "X", "zip": "123"}, "people": [{"n": "b", "m": nu', "ll}]}"),
        (HEAD + '"address": {"city": "X", "zip": "123"}, "joined": "', '2000-01-01"}'),
        (
            '{"name": "a\\',
            '\\", "age": 1, "tags": [""], "kind": "person", "address": {"city": "", "zip": "aaa"}}',
        ),
    ],
)
def test_the_completion_is_short_and_makes_a_schema_valid_value(
    partial: str, completion: str
) -> None:
    assert shortest_completion(partial, SCHEMA) == completion
    jsonschema.validate(json.loads(partial + completion), SCHEMA)


@pytest.mark.parametrize(
    ("fmt", "partial", "rest"),
    [
        ("email", "acorn-office-supply", '@a"'),
        ("email", "Umar.S.S.", 'a@a"'),
        ("email", "x@mail.", 'a"'),
        ("email", "x@mail", '"'),
        ("date", "2025-0", '1-01"'),
        ("date", "May 5", '"'),  # not the date's shape: the engine decides
        ("date-time", "2025-10-17T1", '0:00:00Z"'),
    ],
)
def test_open_strings_of_a_format_are_finished_in_its_shape(
    fmt: str, partial: str, rest: str
) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert shortest_completion('{"v": "' + partial, schema) == rest + "}"


def test_a_whole_value_needs_nothing_and_prose_before_it_is_skipped() -> None:
    assert shortest_completion('{"a": 1}', {}) == ""
    assert shortest_completion('Here: {"a": [1, 2', {}) == "]}"


def test_without_a_schema_the_brackets_are_closed() -> None:
    partial = '{"a": {"b": [1, {"c": "x'
    assert json.loads(partial + shortest_completion(partial, None))
