"""Regular expressions from JSON Schemas, matched in bounded time.

jsonschema checks `pattern` and `patternProperties` with Python's `re`, a backtracking
engine that cannot be interrupted: `^(a+)+$` against a few dozen a's and a "!" runs for
minutes, a little longer for centuries. Schemas come from datasets downloaded from
strangers and the strings from a model, so those keywords are matched here with the
`regex` module (the same syntax as `re`), which stops a match after a time limit. A
stopped match is a validation error that names the pattern, never a hang.

Limits: one match may take PATTERN_TIMEOUT_S, all matches while validating one value
VALIDATION_BUDGET_S. Real patterns against model outputs take microseconds.
"""

from __future__ import annotations

import contextlib
import reprlib
import threading
import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import regex
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend

PATTERN_TIMEOUT_S = 0.1
VALIDATION_BUDGET_S = 1.0

_state = threading.local()
_short = reprlib.Repr()
_short.maxstring = 60


class PatternStopped(Exception):
    """A match ran out of time; the message says which pattern and value."""


@contextlib.contextmanager
def time_budget(seconds: float = VALIDATION_BUDGET_S) -> Iterator[None]:
    """All pattern matches inside share `seconds` of wall clock."""
    previous = getattr(_state, "deadline", None)
    _state.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _state.deadline = previous


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    return regex.compile(pattern)


def pattern_search(pattern: str, text: str) -> bool:
    """`re.search(pattern, text) is not None`, in bounded time (PatternStopped)."""
    deadline = getattr(_state, "deadline", None)
    limit = PATTERN_TIMEOUT_S
    if deadline is not None:
        limit = min(limit, deadline - time.monotonic())
    stopped = PatternStopped(
        f"{_short.repr(text)} not checked against {pattern!r}: matching stopped after "
        f"{PATTERN_TIMEOUT_S:g} s (a pattern with catastrophic backtracking?)"
    )
    if limit <= 0:
        raise stopped
    try:
        return _compiled(pattern).search(text, timeout=limit) is not None
    except TimeoutError:
        raise stopped from None
    except regex.error as exc:
        raise PatternStopped(f"pattern {pattern!r} cannot be matched: {exc}") from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        if not pattern_search(pattern, instance):
            yield ValidationError(f"{_short.repr(instance)} does not match {pattern!r}")
    except PatternStopped as stopped:
        yield ValidationError(str(stopped))


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                matched = pattern_search(pattern, key)
            except PatternStopped as stopped:
                yield ValidationError(str(stopped))
                continue
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_for(original: Any) -> Any:
    """jsonschema's `additionalProperties`, with the patternProperties part bounded
    (without patternProperties no pattern is involved and the original runs)."""

    def additional_properties(
        validator: Any, allowed: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if "patternProperties" not in schema:
            yield from original(validator, allowed, instance, schema)
            return
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        extras: list[str] = []
        for key in instance:
            if key in properties:
                continue
            try:
                if not any(pattern_search(p, key) for p in schema["patternProperties"]):
                    extras.append(key)
            except PatternStopped as stopped:
                yield ValidationError(str(stopped))
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            names = ", ".join(repr(e) for e in sorted(extras))
            patterns = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{names} {verb} not match any of the regexes: {patterns}")

    return additional_properties


_BOUNDED: dict[Any, Any] = {}


def bounded_validator(cls: Any) -> Any:
    """`cls` (a jsonschema validator class) with the regex keywords matched in bounded
    time. `unevaluatedProperties` next to `patternProperties` is still matched by
    jsonschema itself (docs/reliability.md)."""
    if cls not in _BOUNDED:
        overrides: dict[str, Any] = {}
        if "pattern" in cls.VALIDATORS:
            overrides["pattern"] = _pattern
        if "patternProperties" in cls.VALIDATORS:
            overrides["patternProperties"] = _pattern_properties
        if "additionalProperties" in cls.VALIDATORS:
            original = cls.VALIDATORS["additionalProperties"]
            overrides["additionalProperties"] = _additional_properties_for(original)
        _BOUNDED[cls] = extend(cls, overrides)
    return _BOUNDED[cls]
