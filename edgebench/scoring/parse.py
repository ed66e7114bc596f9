"""Turn a model's raw output into a JSON value, recording which extraction path worked.

This is the lenient extraction (`--parse lenient`, the default), fixed by docs/metrics.md
("Shared rules"): the whole text, then fenced blocks (```json ones first, the last one
first), then the answer's first complete top-level value (`jsonscan.first_value`: it
starts at a `{` or `[` outside any earlier value, and nothing nested inside a cut-off
answer counts). Anything a decoder can throw on hostile text (deep nesting, huge integers,
NaN/Infinity) becomes a failed parse, never an exception. The published reference
extractions (`--parse reference`) are in scoring/reference.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from edgebench.scoring.jsonscan import first_value
from edgebench.scoring.strict import MAX_INT_DIGITS, InvalidJSON, decode_strict

__all__ = [
    "MAX_INT_DIGITS",
    "InvalidJSON",
    "ParsePath",
    "ParseResult",
    "decode_strict",
    "parse_json_output",
]

ParsePath = Literal[
    "whole",  # the whole text
    "fenced_json",  # a ```json block (lenient), the text after the last ```json (reference)
    "fenced",  # another fenced block (lenient)
    "first_value",  # the first complete top-level value (lenient)
    "before_fence",  # the text before the first ``` (DeepJSONEval's scorer, no ```json)
    "brace_regex",  # an object found by the EdgeJSON harness's regular expression
    "none",
]

# An opening fence, its info string (the language tag) and the body up to the closing
# fence, or up to the end of the text when the model hit its token limit mid-block.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class ParseResult:
    """What the parse step found. `value` is None when `ok` is False.

    `answer_json` says whether the answer's own top-level value is JSON (the lenient
    rule) when the extraction that found `value` was another one (a reference scorer's);
    None when `ok` says it."""

    ok: bool
    value: Any
    path: ParsePath
    error: str | None = None
    answer_json: bool | None = None

    @property
    def valid_json(self) -> bool:
        """The answer's own top-level value parses, whichever extraction was scored:
        never an inner fragment of a cut-off answer."""
        return self.ok if self.answer_json is None else self.answer_json


def _fenced_blocks(text: str) -> Iterator[tuple[ParsePath, str]]:
    """Fence bodies in trial order: ```json blocks last first, then the others last first."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    blocks.reverse()
    for tag, body in blocks:
        if tag == "json":
            yield "fenced_json", body
    for tag, body in blocks:
        if tag != "json":
            yield "fenced", body


def parse_json_output(raw: str) -> ParseResult:
    """Extract one JSON value from `raw`; never raises on any string."""
    text = raw.strip()
    if not text:
        return ParseResult(False, None, "none", "empty output")
    errors: list[InvalidJSON] = []

    def attempt(body: str, start: int | None = None) -> tuple[bool, Any]:
        try:
            return True, decode_strict(body, start)
        except InvalidJSON as failure:
            errors.append(failure)
            return False, None

    ok, value = attempt(text)
    if ok:
        return ParseResult(True, value, "whole")
    for path, body in _fenced_blocks(text):
        ok, value = attempt(body.strip())
        if ok:
            return ParseResult(True, value, path)
    ok, value = first_value(text)
    if ok:
        return ParseResult(True, value, "first_value")
    return ParseResult(False, None, "none", _reason(text, errors))


def _reason(text: str, errors: list[InvalidJSON]) -> str:
    """Why nothing parsed: a refusal (too deep, too long, NaN) says the most, then the
    syntax error of the JSON the model most likely meant, the one at the first bracket."""
    refused = next((e for e in errors if e.refused), None)
    if refused is not None:
        return f"JSON refused: {refused}"
    first = re.search(r"[{\[]", text)
    if first is None:
        return "no JSON object or array in the output"
    try:
        decode_strict(text, first.start())
    except InvalidJSON as failure:
        return f"{'JSON refused' if failure.refused else 'invalid JSON'}: {failure}"
    # A value decodes there but is not the answer's: it lies inside an earlier candidate
    # that closes without being JSON (`{note: {"a": 1}}`).
    return "no complete top-level JSON value in the output"
