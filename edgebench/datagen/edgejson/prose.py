"""A tiny template language that turns a record into prose mentioning every value.

    {path}            the value (`store.name` reaches into a nested object);
                      a list of primitives reads "a, b and c"
    {path?yes|no}     a boolean as one of two phrases
    {path:part}       a list of objects, each rendered with the part template `part`,
                      joined with "; " (parts often contain commas)
    [ ... ]           an optional segment, dropped when any value in it is absent

Numbers print in their JSON form (12.5, not 12.50) so the text holds the exact expected digits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_SEGMENT = re.compile(r"\[([^\[\]]*)\]")
_SLOT = re.compile(
    r"\{(?P<path>[a-z_][a-z0-9_.]*)(?:\?(?P<yes>[^|{}]*)\|(?P<no>[^{}]*)|:(?P<part>[a-z_]+))?\}"
)
_MISSING = object()


def natural_join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _lookup(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _fill(match: re.Match[str], record: Mapping[str, Any], parts: Mapping[str, str]) -> str:
    path = match["path"]
    value = _lookup(record, path)
    if value is _MISSING:
        raise KeyError(f"template slot {{{path}}} has no value; optional slots go inside [ ]")
    if match["yes"] is not None:
        return match["yes"] if value else match["no"]
    if match["part"]:
        return "; ".join(_expand(parts[match["part"]], item, parts) for item in value)
    if isinstance(value, list):
        return natural_join([as_text(item) for item in value])
    return as_text(value)


def _tidy(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        line = re.sub(r" {2,}", " ", line).strip()
        lines.append(re.sub(r" ([,.;])", r"\1", line))
    text = "\n".join(lines)
    # Templates never open with a slot, so this only capitalises template wording.
    return text[:1].upper() + text[1:]


def _expand(template: str, record: Mapping[str, Any], parts: Mapping[str, str]) -> str:
    def keep_if_present(segment: re.Match[str]) -> str:
        body = segment[1]
        present = all(_lookup(record, m["path"]) is not _MISSING for m in _SLOT.finditer(body))
        return body if present else ""

    text = _SEGMENT.sub(keep_if_present, template)
    return _SLOT.sub(lambda m: _fill(m, record, parts), text)


def render(template: str, record: Mapping[str, Any], parts: Mapping[str, str]) -> str:
    return _tidy(_expand(template, record, parts))


def slot_paths(
    template: str, parts: Mapping[str, str], prefix: str = ""
) -> tuple[set[str], set[str]]:
    """(always, optional): the leaf paths a template always mentions, and those it may drop.

    Paths use the notation of `shape.leaves`, so tests can check every field is mentioned.
    """
    always: set[str] = set()
    optional: set[str] = set()
    sections = (
        (_SEGMENT.sub("", template), always),
        ("".join(m[1] for m in _SEGMENT.finditer(template)), optional),
    )
    for text, bucket in sections:
        for match in _SLOT.finditer(text):
            path = prefix + match["path"]
            if match["part"]:
                inner_always, inner_optional = slot_paths(parts[match["part"]], parts, f"{path}[].")
                bucket |= inner_always
                optional |= inner_optional
            else:
                bucket.add(path)
    return always, optional
