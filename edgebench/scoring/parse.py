"""Turn a model's raw output into a JSON value, recording which extraction path worked.

The order is fixed by docs/metrics.md ("Shared rules"): the whole text, then fenced
blocks (```json ones first, the last one first), then the first balanced JSON value
found with `raw_decode` from a `{` or `[`. Anything a decoder can throw on hostile text
(deep nesting, huge integers, NaN/Infinity) becomes a failed parse, never an exception.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

ParsePath = Literal["whole", "fenced_json", "fenced", "raw_decode", "none"]

# CPython's own default limit (sys.int_info.default_max_str_digits); fixed here so that
# Python 3.10, which has no limit, rejects the same outputs as 3.11+.
MAX_INT_DIGITS = 4300

# An opening fence, its info string (the language tag) and the body up to the closing
# fence, or up to the end of the text when the model hit its token limit mid-block.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class ParseResult:
    """What the parse step found. `value` is None when `ok` is False."""

    ok: bool
    value: Any
    path: ParsePath
    error: str | None = None


class _Rejected(ValueError):
    """Valid for Python's json module, but not JSON (or not a value we can score)."""


def _reject_constant(name: str) -> Any:
    raise _Rejected(f"{name} is not valid JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # "1e999" decodes to inf, which JSON cannot carry
        raise _Rejected(f"number {text[:20]} is out of range")
    return value


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Rejected(f"integer with {digits} digits is too long")
    return int(text)


_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_parse_float, parse_int=_parse_int
)


class InvalidJSON(ValueError):
    """Text that is not strict JSON. `refused`: it holds JSON-like data we will not accept
    (too deep, too long, not finite), which says more than a mere syntax error."""

    def __init__(self, message: str, *, refused: bool = False, too_deep: bool = False) -> None:
        super().__init__(message)
        self.refused = refused or too_deep
        self.too_deep = too_deep


def decode_strict(text: str, start: int | None = None) -> Any:
    """Decode all of `text`, or (with `start`) the first value at that offset.

    Stricter than `json.loads` (no NaN/Infinity, no out-of-range numbers) and it raises
    only InvalidJSON, with a one-line reason.
    """
    try:
        if start is None:
            return _DECODER.decode(text)
        return _DECODER.raw_decode(text, start)[0]
    except RecursionError:
        raise InvalidJSON("JSON nested too deeply", too_deep=True) from None
    except json.JSONDecodeError as exc:
        raise InvalidJSON(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # our _Rejected, or int() limits set by the interpreter
        raise InvalidJSON(str(exc), refused=True) from None


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
    first_bracket_error: InvalidJSON | None = None
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        ok, value = attempt(text, start)
        if ok:
            return ParseResult(True, value, "raw_decode")
        first_bracket_error = first_bracket_error or errors[-1]
        # Every later start inside a too-deep value nests almost as deeply: retrying each
        # one would cost O(length * depth) and fail the same way.
        if errors[-1].too_deep:
            break
    return ParseResult(False, None, "none", _reason(errors, first_bracket_error))


def _reason(errors: list[InvalidJSON], first_bracket_error: InvalidJSON | None) -> str:
    """Why nothing parsed: a refusal (too deep, too long, NaN) says the most, then the
    syntax error of the JSON the model most likely meant, the one at the first bracket."""
    refused = next((e for e in errors if e.refused), None)
    if refused is not None:
        return f"JSON refused: {refused}"
    if first_bracket_error is None:
        return "no JSON object or array in the output"
    return f"invalid JSON: {first_bracket_error}"
