"""The schema keyword guard: numeric bounds and uniqueItems, enforced while text is written."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from edgebench.constraints.guard import KeywordGuard, NumberRule, guarded_keywords

SCHEMA = {
    "type": "object",
    "properties": {
        "signal_dbm": {"type": "integer", "minimum": -120, "maximum": 0},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "days": {
            "type": "array",
            "items": {"type": "string", "enum": ["Monday", "Tuesday", "Thursday"]},
            "uniqueItems": True,
        },
        "devices": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "zones": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"humidity": {"type": "integer", "minimum": 0, "maximum": 100}},
            },
        },
        "name": {"type": "string"},
    },
}


def fed(text: str, schema: dict = SCHEMA) -> KeywordGuard:
    guard = KeywordGuard(schema)
    assert guard.try_advance(text), f"the guard refused the prefix {text!r}"
    return guard


@pytest.mark.parametrize(
    ("prefix", "piece", "allowed"),
    [
        ('{"signal_dbm": ', "-", True),
        ('{"signal_dbm": ', "1", False),  # no positive number is <= 0
        ('{"signal_dbm": ', "0", True),
        ('{"signal_dbm": -12', "0", True),  # -120
        ('{"signal_dbm": -12', "1", False),  # -121 and beyond
        ('{"signal_dbm": -1', "2", True),
        ('{"signal_dbm": -5', "e", False),  # bounded numbers are written without exponent
        ('{"signal_dbm": -5', ", ", True),
        ('{"confidence": ', "0.", True),
        ('{"confidence": 0.', "95", True),
        ('{"confidence": ', "1.5", False),
        ('{"confidence": 1', ".0}", True),
        ('{"confidence": ', "2", False),
        ('{"confidence": 1', "}", True),
        ('{"zones": [{"humidity": ', "101", False),
        ('{"zones": [{"humidity": 10', "0}", True),
        ('{"zones": [{"humidity": 10', "1", False),
        ('{"name": "', "2711123311111111", True),  # strings are not numbers
    ],
)
def test_numeric_bounds_while_writing(prefix: str, piece: str, allowed: bool) -> None:
    assert fed(prefix).allows(piece) is allowed


def test_number_ending_out_of_range_is_refused_at_its_delimiter() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 10}}}
    guard = fed('{"n": 5', schema)  # 5 could still become 50
    assert guard.allows("0}")
    assert not guard.allows("}")
    assert not guard.allows(", ")


def test_exclusive_bounds_draft6_and_draft4() -> None:
    d6 = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10}
    d4 = {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 10}
    for schema, ten in ((d6, False), (d4, True)):
        rule = NumberRule.of(schema)
        assert rule is not None
        assert not rule.accepts(Decimal(0)) and rule.accepts(Decimal("0.5"))
        assert rule.accepts(Decimal(10)) is ten
        assert rule.reachable("0.")  # 0.5 is still possible


def test_integer_schema_refuses_a_fraction_and_non_integer_range() -> None:
    rule = NumberRule.of({"type": "integer", "minimum": 0.5, "maximum": 0.9})
    assert rule is not None
    assert not rule.reachable("0") and not rule.reachable("1") and not rule.reachable("")


def test_multiple_of_is_checked_when_the_number_ends() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 5}}}
    guard = fed('{"n": 7', schema)
    assert not guard.allows("}") and guard.allows("0}")


def test_unique_enum_items_cannot_start_a_used_value() -> None:
    guard = fed('{"days": ["Monday", ')
    assert not guard.allows('"M')  # only Monday starts with M: the grammar would force it
    assert guard.allows('"T')  # Tuesday or Thursday
    guard.advance('"Tuesday", "Thu')
    assert guard.allows("")  # an empty piece is always allowed
    assert guard.allows('rsday"]')


def test_unique_enum_array_ends_when_every_value_is_used() -> None:
    guard = fed('{"days": ["Monday", "Tuesday", "Thursday"')
    assert not guard.allows(", ")  # a fourth item could only repeat one
    assert guard.allows("]")
    assert fed('{"days": ["Monday"').allows(", ")


def test_unique_free_string_items_cannot_end_equal() -> None:
    guard = fed('{"devices": ["printer", "scanner", "printer')
    assert not guard.allows('"')
    assert not guard.allows('"]')
    assert guard.allows(' 2"]')  # "printer 2" is a new item


def test_unique_items_compare_by_json_equality() -> None:
    schema = {"type": "array", "items": {"type": "number"}, "uniqueItems": True}
    guard = fed("[1, 2", schema)
    assert guard.allows(", 1.5]")
    assert not guard.allows(", 1.0]")  # 1.0 equals 1
    bools = fed("[1, ", {"type": "array", "uniqueItems": True})
    assert bools.allows("true]")  # true is not 1


def test_unique_arrays_of_objects_and_nested_arrays() -> None:
    schema = {"type": "array", "items": {"type": "object"}, "uniqueItems": True}
    guard = fed('[{"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1', schema)
    assert not guard.allows("}")  # same object, keys in another order
    assert guard.allows(', "c": 0}')
    nested = {"type": "array", "items": {"type": "array"}, "uniqueItems": True}
    guard = fed("[[1, 2], [1, 2", nested)
    assert not guard.allows("]") and guard.allows(", 3]")


def test_try_advance_commits_only_allowed_text_and_counts_vetoes() -> None:
    guard = fed('{"signal_dbm": ')
    assert guard.try_advance("7") is False and guard.vetoes == 1
    assert guard.try_advance("-7") is True
    assert guard.try_advance("0") is True  # -70
    assert guard.try_advance("0") is False  # -700


def test_local_refs_are_followed_and_unknown_branches_are_not_judged() -> None:
    schema = {
        "type": "object",
        "$defs": {"pct": {"type": "integer", "minimum": 0, "maximum": 100}},
        "properties": {
            "a": {"$ref": "#/$defs/pct"},
            "b": {"anyOf": [{"type": "integer", "maximum": 0}, {"type": "string"}]},
            "c": {"$ref": "http://example.com/s.json"},
        },
        "additionalProperties": {"type": "integer", "maximum": 3},
    }
    assert not fed('{"a": ', schema).allows("200")
    assert fed('{"b": ', schema).allows("200")  # which branch applies is not known
    assert fed('{"c": ', schema).allows("200")
    assert not fed('{"zzz": ', schema).allows("4")


def test_text_outside_the_json_and_escapes_in_strings() -> None:
    guard = fed('{"name": "a \\" ] } \\u005d", "signal_dbm": ')
    assert not guard.allows("5")
    guard = fed('{"name": "x"} and then some text 999')
    assert guard.allows("1234")


def test_a_whole_valid_answer_passes_and_keywords_are_listed() -> None:
    answer = {
        "signal_dbm": -67,
        "confidence": 0.93,
        "days": ["Monday", "Thursday"],
        "devices": ["printer", "scanner"],
        "zones": [{"humidity": 55}, {"humidity": 100}],
        "name": "n",
    }
    for text in (json.dumps(answer), json.dumps(answer, indent=2)):
        guard = KeywordGuard(SCHEMA)
        for char in text:
            assert guard.try_advance(char), text[: text.index(char)]
    assert KeywordGuard(SCHEMA).active
    assert not KeywordGuard({"type": "object"}).active
    assert guarded_keywords(SCHEMA) == [
        "$.signal_dbm: maximum, minimum",
        "$.confidence: maximum, minimum",
        "$.days: uniqueItems",
        "$.devices: uniqueItems",
        "$.zones[].humidity: maximum, minimum",
    ]
