"""The streaming scanner that says when an answer's first top-level JSON value is complete
(what `stop at the complete JSON` ends generation by), and `first_value`, the extraction a
stopped answer equals."""

from __future__ import annotations

import json

import pytest

from edgebench.metrics import get_family
from edgebench.metrics.score import score_output
from edgebench.scoring.jsonscan import JsonValueScanner, first_value


def stopped(text: str, chunk: int = 1) -> str | None:
    """The text up to where a decoder feeding `chunk` bytes at a time would stop (the
    whole chunk that completed the value kept, as a token would be); None: never."""
    scanner = JsonValueScanner()
    data = text.encode("utf-8")
    for end in range(chunk, len(data) + chunk, chunk):
        if scanner.feed(data[end - chunk : end]):
            return data[:end].decode("utf-8")
    return None


@pytest.mark.parametrize(
    ("text", "expected_stop"),
    [
        ('{"a": 1} and then some prose', '{"a": 1}'),  # bare
        ('```json\n{"a": [1, {"b": 2}]}\n```\nDone.', '```json\n{"a": [1, {"b": 2}]}'),  # fenced
        ('Here it is: {"a": {"b": {"c": []}}} ok', 'Here it is: {"a": {"b": {"c": []}}}'),
        ('{"q": "say \\"}\\" or {", "n": 1} tail', '{"q": "say \\"}\\" or {", "n": 1}'),
        ("[1, 2] [3]", "[1, 2]"),  # an array is a value too
        ('{name} is not JSON; {"a": 1}', '{name} is not JSON; {"a": 1}'),
        ('{"a": "é ü 日本"} x', '{"a": "é ü 日本"}'),
    ],
)
def test_the_scanner_stops_right_after_the_first_complete_value(
    text: str, expected_stop: str
) -> None:
    assert stopped(text) == expected_stop
    assert stopped(text, chunk=3) is not None  # several bytes per token work too


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ["Movie"], "b": "cut off',  # truncated: the inner ["Movie"] is no value of its own
        '{"a": "x\\"}"',  # the escaped quote keeps the brace in the string
        '```json\n{"a": 1, "b": [1, 2',
        "no JSON at all",
        '{"a": NaN}',  # bracket-balanced, not JSON
    ],
)
def test_cut_off_and_broken_answers_never_complete(text: str) -> None:
    assert stopped(text) is None
    assert first_value(text) == (False, None)


def test_first_value_is_the_value_the_scanner_completes() -> None:
    assert first_value('x {"a": 1} {"b": 2}') == (True, {"a": 1})
    assert first_value("[1, [2]]") == (True, [1, [2]])


ANSWERS = [
    '{"name": "Ada", "age": 36}\nThe JSON above has the name.',
    '```json\n{"name": "Ada", "age": 36}\n```\nI hope this helps! {"x": 1}',
    'Sure: {"name": "Ada"} and {"name": "Bob", "age": 1}',
    '{"name": "Ada", "age": 36}}}}',
]


@pytest.mark.parametrize("full", ANSWERS)
def test_a_stopped_answer_scores_as_the_full_one_under_first_value_extraction(full: str) -> None:
    family = get_family("edgejson")
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    }
    expected = {"name": "Ada", "age": 36}
    cut = stopped(full)
    assert cut is not None
    ok, value = first_value(full)
    assert ok
    as_deployed = score_output([family], cut, expected, schema)
    as_first_value = score_output([family], json.dumps(value), expected, schema)
    assert as_deployed.scores == as_first_value.scores
    # And where nothing after the value is fenced, the lenient parse agrees too.
    if "```" not in full:
        assert score_output([family], full, expected, schema).scores == as_deployed.scores
