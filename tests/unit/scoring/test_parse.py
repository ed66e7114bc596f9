"""Extracting one JSON value from a model's raw output: whole, fenced, or the first
balanced value; strict JSON only, and never an exception."""

import pytest

from edgebench.scoring.parse import (
    MAX_INT_DIGITS,
    InvalidJSON,
    ParseResult,
    decode_strict,
    parse_json_output,
)

PARSED = [
    # (raw output, value, path)
    ('  \n{"a": 1, "b": [true, null]}\n ', {"a": 1, "b": [True, None]}, "whole"),
    ("42", 42, "whole"),
    ('"x"', "x", "whole"),
    ('Here you go:\n```json\n{"a": 1}\n```\nDone.', {"a": 1}, "fenced_json"),
    ('```JSON\n{"a": 1}\n```', {"a": 1}, "fenced_json"),
    ("Answer:\n```\n[1, 2]\n```", [1, 2], "fenced"),
    ('```json{"a": 1}```', {"a": 1}, "fenced_json"),
    ('```{"a": 1}```', {"a": 1}, "fenced"),
    # the last ```json block wins
    ('Draft:\n```json\n{"v": 1}\n```\nFixed:\n```json\n{"v": 2}\n```\n', {"v": 2}, "fenced_json"),
    # a ```json block beats a later plain block
    ('```json\n{"v": 1}\n```\nExample call:\n```\n{"v": 2}\n```', {"v": 1}, "fenced_json"),
    # a broken last ```json block falls back to an earlier one
    ('```json\n{"v": 1}\n```\nBetter:\n```json\n{"v": 2,\n```', {"v": 1}, "fenced_json"),
    # other fences are tried last first
    ('```\n{"v": 1}\n```\n```python\nprint(1)\n```\n```text\n{"v": 3}\n```', {"v": 3}, "fenced"),
    # unterminated fence: the model hit its token limit after the value
    ('```json\n{"a": 1, "b": "x"}\n', {"a": 1, "b": "x"}, "fenced_json"),
    # extra text before and after: the first balanced value
    (
        'Sure! It is {"a": {"b": [1, 2]}} and that is all {"c": 3}',
        {"a": {"b": [1, 2]}},
        "first_value",
    ),
    # a later start when the first bracket does not open JSON
    ('Fields {name, age}: [{"name": "Ann"}]', [{"name": "Ann"}], "first_value"),
]


@pytest.mark.parametrize(("raw", "value", "path"), PARSED)
def test_parsed(raw, value, path):
    assert parse_json_output(raw) == ParseResult(True, value, path, None)


DEEP = "JSON refused: JSON nested too deeply"
FAILED = [
    # (raw output, start of the error)
    ("", "empty output"),
    ("   \n\t", "empty output"),
    ("I cannot help with that.", "no JSON object or array in the output"),
    ("{'a': 1}", "invalid JSON: Expecting property name enclosed in double quotes"),
    ('{"a": 1,}', "invalid JSON: "),
    ('```json\n{"a": 1, "b": [', "invalid JSON: Expecting value at line 2"),  # truncated
    # a cut-off answer: its complete inner values are fragments, never the answer
    ('{"items": [{"a": 1}, {"a": 2}, {"a":', "invalid JSON: Expecting value"),
    ('{"genres": ["Movie"], "cast": [""], "plot": "A', "invalid JSON: Unterminated string"),
    ('Here: [{"a": 1}, {"b": [1, 2]}', "invalid JSON: Expecting ',' delimiter"),
    ('{note: {"a": 1}}', "invalid JSON: Expecting property name"),
    # deep nesting: a failure of this sample, not a RecursionError for the run
    ("[" * 100_000, DEEP),
    ('{"a":' * 50_000, DEEP),
    ("[" * 5_000 + "]" * 5_000, DEEP),
    ("text before ```json\n" + '{"a":' * 20_000 + "1" + "}" * 20_000 + "\n```", DEEP),
    # not JSON although Python's json module accepts it
    ('{"a": NaN}', "JSON refused: NaN is not valid JSON"),
    ('{"a": Infinity}', "JSON refused: Infinity is not valid JSON"),
    ("[-Infinity]", "JSON refused: -Infinity is not valid JSON"),
    ("Result: ```json\n[NaN]\n```", "JSON refused: NaN"),
    ('{"a": 1e999}', "JSON refused: number 1e999 is out of range"),
    (f'{{"n": {"9" * (MAX_INT_DIGITS + 1)}}}', "JSON refused: integer with 4301 digits"),
]


@pytest.mark.parametrize(("raw", "error"), FAILED)
def test_failed(raw, error):
    result = parse_json_output(raw)
    assert (result.ok, result.value, result.path) == (False, None, "none")
    assert result.error.startswith(error)


def test_longest_integer_allowed():
    assert parse_json_output(f'{{"n": -{"9" * MAX_INT_DIGITS}}}').ok


@pytest.mark.parametrize(
    "raw", ["```", "``````", "```json", "{", "[}", "}{", '"', "\x00", "\ud800", "{" * 10 + "``"]
)
def test_odd_inputs_never_raise(raw):
    assert parse_json_output(raw).ok is False


def test_decode_strict_raises_only_invalid_json():
    assert decode_strict('{"a": [1.5]}') == {"a": [1.5]}
    for text in ("nope", "[NaN]", "[" * 10_000, "1" * (MAX_INT_DIGITS + 1)):
        with pytest.raises(InvalidJSON):
            decode_strict(text)
