"""JSON equality, which differs from Python's `==` on booleans (docs/metrics.md)."""

from __future__ import annotations

from typing import Any


def json_kind(value: Any) -> str:
    """The JSON type of a decoded value: object, array, string, number, boolean or null.

    bool is tested before int because Python's bool is an int subclass, the reason
    `True == 1` holds in Python but `true != 1` in JSON.
    """
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def json_equal(a: Any, b: Any) -> bool:
    """True when `a` and `b` are the same JSON value.

    Objects compare without key order, arrays in order, 1 == 1.0, true != 1. Iterative,
    so a value nested as deeply as the parser allows cannot overflow the stack.
    """
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        kind = json_kind(x)
        if kind != json_kind(y):
            return False
        if kind == "object":
            if x.keys() != y.keys():
                return False
            pending.extend((x[key], y[key]) for key in x)
        elif kind == "array":
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True
