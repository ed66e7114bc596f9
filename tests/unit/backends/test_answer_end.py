"""The answer-ending policies in the decode loops: stop at the complete JSON (free modes),
loop detection (every mode), and closing a cut-off answer under the `mask` engine. The
ONNX backend runs on a logits table (the next token depends only on the last one), its
byte-level tokenizer and llguidance are real, so the loops, the mask and the closing are
the code a real run uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from edgebench.backends.answer_end import AnswerWatch, EndPolicy, LoopDetector, LoopRule
from edgebench.backends.base import DecodeSettings
from edgebench.constraints import request_for
from edgebench.runfolder.records import FINISH_JSON_COMPLETE, FINISH_LENGTH, FINISH_LOOP
from tests.helpers.constraints import NESTED_SCHEMA
from tests.helpers.onnx_fakes import EOS, PROMPT, VOCAB, backend_for_table

STOP_AND_LOOPS = EndPolicy(stop_at_json=True, loop=LoopRule())


def chained(folder: Path, after: dict[str, str], mode: str = "none") -> Any:
    """A backend whose best token after character `a` is `after[a]` (second best: a
    space), everything else low; the end token is never best."""
    backend = backend_for_table(folder, np.zeros((VOCAB, VOCAB), dtype=np.float32), mode)

    def tid(char: str) -> int:
        (token,) = backend.encode(char)
        return token

    table = np.full((VOCAB, VOCAB), -5.0, dtype=np.float32)
    table[:, tid(" ")] = 1.0
    table[:, EOS] = -10.0
    for last, best in after.items():
        table[tid(last), tid(best)] = 5.0
    backend.session.table = table
    return backend


# -- the loop rule --------------------------------------------------------------------------


def test_a_token_repeated_min_tokens_times_is_a_loop() -> None:
    detector = LoopDetector(LoopRule(max_period=4, min_tokens=8, min_repeats=3))
    assert [detector.push(7) for _ in range(8)] == [False] * 7 + [True]


def test_a_period_must_repeat_min_repeats_times() -> None:
    rule = LoopRule(max_period=8, min_tokens=8, min_repeats=3)
    detector = LoopDetector(rule)
    item = [1, 2, 3, 4, 5]  # period 5: 15 tokens are three copies
    pushed = [detector.push(t) for t in item * 3]
    assert pushed.index(True) == 14 and rule.span(5) == 15


def test_varied_text_is_never_a_loop_and_long_periods_are_left_to_the_budget() -> None:
    detector = LoopDetector(LoopRule(max_period=4, min_tokens=8, min_repeats=3))
    assert not any(detector.push(t) for t in range(100))
    detector = LoopDetector(LoopRule(max_period=4, min_tokens=8, min_repeats=3))
    assert not any(detector.push(t) for t in list(range(6)) * 10)  # period 6 > 4


def test_the_rule_refuses_parameters_that_would_flag_everything() -> None:
    with pytest.raises(ValueError, match="loop rule"):
        LoopRule(min_repeats=1)


def test_the_watch_notes_where_the_answer_was_complete_even_when_it_goes_on() -> None:
    watch = AnswerWatch(EndPolicy())
    pieces = [b"{", b'"a"', b": 1", b"}", b" and", b" more"]
    assert [watch.push(i, p) for i, p in enumerate(pieces)] == [None] * 6
    assert watch.answer_tokens == 4
    stopping = AnswerWatch(STOP_AND_LOOPS)
    assert [stopping.push(i, p) for i, p in enumerate(pieces[:4])][-1] == FINISH_JSON_COMPLETE


# -- free modes: stop at the JSON, loops ----------------------------------------------------


def test_a_free_answer_stops_when_its_first_json_value_is_complete(tmp_path: Path) -> None:
    # ':' (the prompt's end) -> '{' -> '}' -> ' ' -> ' ' ... : "{}" then spaces forever
    backend = chained(tmp_path / "m", {":": "{", "{": "}"})
    stopped = backend.generate(PROMPT, DecodeSettings(max_tokens=40, end=STOP_AND_LOOPS))
    assert (stopped.text, stopped.finish_reason) == ("{}", FINISH_JSON_COMPLETE)
    assert stopped.output_tokens == stopped.answer_tokens == 2
    raw = backend.generate(PROMPT, DecodeSettings(max_tokens=40))
    assert raw.finish_reason == FINISH_LENGTH and raw.output_tokens == 40
    assert raw.text.startswith("{}") and raw.answer_tokens == 2


def test_a_looping_free_answer_ends_as_a_loop(tmp_path: Path) -> None:
    backend = chained(tmp_path / "m", {":": "a", "a": "a"})
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=200, end=STOP_AND_LOOPS))
    assert gen.finish_reason == FINISH_LOOP
    assert gen.text == "a" * LoopRule().min_tokens and gen.answer_tokens is None


# -- mask: loops and closing ----------------------------------------------------------------

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
ARRAY_SCHEMA = {
    "type": "object",
    "properties": {
        "ids": {"type": "array", "items": {"type": "integer"}},
        "note": {"type": "string"},
    },
    "required": ["ids", "note"],
}
# Inside a string: 'a' forever. In numbers: '1' then ', ' then '1' again.
LOOPING = {'"': "a", "a": "a", "[": "1", "1": ",", ",": " ", " ": "1", "{": '"'}
# In the nested case the array holds objects: '[' opens one, whose string loops.
NESTED_LOOPING = {**LOOPING, "[": "{"}


@pytest.mark.parametrize(
    ("schema", "table", "loops_in"),
    [
        (NAME_SCHEMA, LOOPING, "a string"),
        (ARRAY_SCHEMA, LOOPING, "an array"),
        (NESTED_SCHEMA, NESTED_LOOPING, "a string in an object in an array in an object"),
    ],
)
def test_closing_turns_a_looping_answer_into_schema_valid_json(
    tmp_path: Path, schema: dict, table: dict[str, str], loops_in: str
) -> None:
    pytest.importorskip("llguidance")
    backend = chained(tmp_path / "m", table, mode="mask")
    request = request_for("mask", schema, "s")
    assert request is not None and backend.compile_constraint(request).ok
    plain = backend.generate(PROMPT, DecodeSettings(max_tokens=80, constraint=request))
    assert plain.finish_reason == FINISH_LENGTH, loops_in
    with pytest.raises(json.JSONDecodeError):
        json.loads(plain.text)
    for policy in (EndPolicy(close=True), EndPolicy(loop=LoopRule(), close=True)):
        settings = DecodeSettings(max_tokens=80, constraint=request, end=policy)
        gen = backend.generate(PROMPT, settings)
        assert gen.closed and gen.error is None, (loops_in, gen.text)
        assert gen.unclosed_text is not None and gen.text.startswith(gen.unclosed_text)
        assert gen.closing_tokens == len(gen.text) - len(gen.unclosed_text)  # one byte each
        jsonschema.validate(json.loads(gen.text), schema)
    assert gen.finish_reason == FINISH_LOOP  # the loop rule cut it before the budget
    assert gen.output_tokens < plain.output_tokens + gen.closing_tokens


def test_an_answer_that_ends_by_itself_is_not_closed(tmp_path: Path) -> None:
    pytest.importorskip("llguidance")
    # After ': ' the best digit is 1, after it '}': {"a": 1}
    backend = chained(tmp_path / "m", {" ": "1", "1": "}"}, mode="mask")
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    request = request_for("mask", schema, "s")
    assert request is not None and backend.compile_constraint(request).ok
    settings = DecodeSettings(max_tokens=60, constraint=request, end=EndPolicy(close=True))
    gen = backend.generate(PROMPT, settings)
    assert json.loads(gen.text) == {"a": 1} and not gen.closed and gen.unclosed_text is None
