"""How deeply the GBNF converter will nest a schema's grammar, known before converting.

llama-cpp-python's converter writes a bounded repetition (a string's `maxLength`, an
array's `maxItems`, a pattern's `{m,n}`) as n - m nested optional groups:
`(c (c (c)?)?)?`. llama.cpp parses groups recursively, so a large bound overflows the
worker's stack: with llama-cpp-python 0.3.36 on x86-64 and an 8 MB stack, a string of
`maxLength` 16383 is refused by llama.cpp ("exceeds sane defaults"), 24000 and 32767 kill
the worker with SIGSEGV. A schema that would nest deeper than `MAX_GBNF_NESTING` is
refused here, with the reason, before the converter or llama.cpp sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Nested groups a GBNF grammar may have: well under where llama.cpp's parser overflows
# an 8 MB stack (about 20,000), and above what llama.cpp accepts anyway (about 1,000).
MAX_GBNF_NESTING = 4096

_QUANTIFIER = re.compile(r"\{\s*(\d*)\s*(,?)\s*(\d*)\s*\}")


@dataclass(frozen=True)
class Nesting:
    depth: int
    where: str  # e.g. "$.notes: maxLength 32767"


def _bound(schema: dict[str, Any], low: str, high: str) -> int:
    top, bottom = schema.get(high), schema.get(low, 0)
    if isinstance(top, bool) or not isinstance(top, int):
        return 0
    if isinstance(bottom, bool) or not isinstance(bottom, int):
        bottom = 0
    return max(top - max(bottom, 0), 0)


def _pattern_depth(pattern: str) -> int:
    deepest = 0
    for low, comma, high in _QUANTIFIER.findall(pattern):
        if comma and high:  # {m,n}: n - m nested groups; {m} and {m,} nest nothing
            deepest = max(deepest, int(high) - int(low or 0))
    return deepest


def _walk(schema: Any, path: str, found: list[Nesting]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _walk(item, path, found)
        return
    if not isinstance(schema, dict):
        return
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        found.append(Nesting(_pattern_depth(pattern), f"{path}: pattern {pattern[:40]!r}"))
    else:  # the converter reads a string's length only without a pattern
        depth = _bound(schema, "minLength", "maxLength")
        found.append(Nesting(depth, f"{path}: maxLength {schema.get('maxLength')}"))
    if isinstance(schema.get("items"), dict):
        depth = _bound(schema, "minItems", "maxItems")
        found.append(Nesting(depth, f"{path}: maxItems {schema.get('maxItems')}"))
    for key, sub in schema.items():
        if isinstance(sub, dict | list) and key not in ("enum", "const", "examples", "default"):
            child = path if key in ("anyOf", "oneOf", "allOf") else f"{path}.{key}"
            if key == "properties" and isinstance(sub, dict):
                for name, prop in sub.items():
                    _walk(prop, f"{path}.{name}", found)
            else:
                _walk(sub, child, found)


def deepest_nesting(schema: Any) -> Nesting:
    """The deepest nesting of bounded repetitions the converter would write for
    `schema` (every subschema counts, $defs too: over-counting is safe)."""
    found: list[Nesting] = [Nesting(0, "$")]
    _walk(schema, "$", found)
    return max(found, key=lambda n: n.depth)


def nesting_refusal(schema: Any, limit: int = MAX_GBNF_NESTING) -> str | None:
    """Why `schema` is refused for GBNF (too deep a grammar), or None."""
    deepest = deepest_nesting(schema)
    if deepest.depth <= limit:
        return None
    return (
        f"{deepest.where} would nest the GBNF grammar {deepest.depth} groups deep "
        f"(limit {limit}: llama.cpp's parser crashes on deep grammars)"
    )
