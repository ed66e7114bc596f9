"""Strict JSON decoding: what Python's json module accepts minus what is not JSON or not a
value edgebench can score (NaN/Infinity, out-of-range numbers, over-long integers, nesting
deeper than the interpreter's stack). Every failure is an InvalidJSON with a one-line
reason, never another exception."""

from __future__ import annotations

import json
import math
from typing import Any

# CPython's own default digit limit, fixed so that every Python rejects the same outputs:
# the same bound as every file edgebench reads back.
from edgebench.readback import MAX_INT_DIGITS


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
