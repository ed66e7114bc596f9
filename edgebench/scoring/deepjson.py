"""DeepJSONEval scores (arXiv:2509.25922, Appendix A; definitions fixed in docs/metrics.md).

Pure functions of (output, expected, schema checker). The benchmark's own rule gates all
three: a sample whose output does not parse or does not validate against its schema
scores 0 on Syntax, Key-matching and Strict alike.

Per-leaf-element-type scores (the paper's Figure 8) use the same key-matching function on
each field of that type, found by following the expected value's path in the output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from edgebench.scoring.equality import json_equal, json_kind
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.schema import SchemaChecker

# The scores in the order tables and summaries list them; higher is better for all.
SCORE_NAMES = ("syntax", "key_matching", "strict", "valid_json")

# Figure 8 of the paper, in its order.
ELEMENT_TYPES = (
    "string",
    "number",
    "boolean",
    "enum",
    "string_list",
    "number_list",
    "object_list",
)

SCHEMA_ERRORS_KEPT = 3


def _is_object_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _set_key(value: Any) -> tuple[str, Any]:
    """A hashable key with JSON equality: 1 and 1.0 share one key (Python hashes equal
    numbers alike), true and 1 do not. Numbers stay as they are: converting an integer to
    a float would overflow past 1e308 and merge 2**53 + 1 with 2**53."""
    kind = json_kind(value)
    if kind in ("object", "array"):
        return kind, json.dumps(value, sort_keys=True, ensure_ascii=False)
    return kind, value


def key_matching(expected: Any, output: Any) -> float:
    """Hierarchical key-matching score `km(expected, output)` in [0, 1] (docs/metrics.md).

    - string / number / boolean / null: 1 if equal (JSON equality), else 0;
    - object: 0 unless output is an object; an empty expected object needs an empty one;
      else the sum of km over expected keys present in output, divided by the size of
      the union of both key sets (extra keys are penalised);
    - empty array: 1 if output is an empty array, else 0;
    - array of objects: 0 unless output is an array of objects; km element-wise over the
      first min(len) positions, divided by max(len);
    - any other array (primitives): 0 unless output is an array; Jaccard of the two sets.
    """
    if isinstance(expected, dict):
        if not isinstance(output, dict):
            return 0.0
        if not expected:
            return 1.0 if not output else 0.0
        matched = sum(key_matching(expected[k], output[k]) for k in expected if k in output)
        return matched / len(expected.keys() | output.keys())
    if isinstance(expected, list):
        if not expected:
            return 1.0 if output == [] else 0.0
        if _is_object_array(expected):
            if not isinstance(output, list) or not all(isinstance(v, dict) for v in output):
                return 0.0
            pairs = zip(expected, output, strict=False)  # the first min(len) positions
            return sum(key_matching(e, o) for e, o in pairs) / max(len(expected), len(output))
        if not isinstance(output, list):
            return 0.0
        want = {_set_key(v) for v in expected}
        got = {_set_key(v) for v in output}
        return len(want & got) / len(want | got)
    return 1.0 if json_equal(expected, output) else 0.0


def element_type(schema: Mapping[str, Any] | None, value: Any) -> str | None:
    """The leaf element type of a field (Figure 8), from its schema, else from its value.

    None for a nested object (a container, not a leaf) and for null.
    """
    schema = schema or {}
    if "enum" in schema:
        return "enum"
    if isinstance(value, dict):
        return None
    if isinstance(value, list):
        if _is_object_array(value):
            return "object_list"
        item_kinds = {json_kind(v) for v in value}
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
        declared = items.get("type") if items else None
        if declared in ("number", "integer") or item_kinds == {"number"}:
            return "number_list"
        if declared == "object":
            return "object_list"
        return "string_list"
    kind = json_kind(value)
    return None if kind == "null" else kind


def _child_schema(schema: Mapping[str, Any] | None, key: str | int) -> Mapping[str, Any] | None:
    if not schema:
        return None
    if isinstance(key, int):
        items = schema.get("items")
        return items if isinstance(items, Mapping) else None
    props = schema.get("properties")
    child = props.get(key) if isinstance(props, Mapping) else None
    return child if isinstance(child, Mapping) else None


_MISSING = object()


def _fields(
    expected: Any, output: Any, schema: Mapping[str, Any] | None
) -> Iterator[tuple[str, Any, Any]]:
    """(element type, expected value, output value at the same path) for every typed field
    of `expected`; the output value is _MISSING where the path does not exist in it."""
    kind = element_type(schema, expected)
    if kind is not None:
        yield kind, expected, output
    if isinstance(expected, dict) and kind is None:
        for key, value in expected.items():
            sub = output.get(key, _MISSING) if isinstance(output, dict) else _MISSING
            yield from _fields(value, sub, _child_schema(schema, key))
    elif kind == "object_list":
        for index, item in enumerate(expected):
            present = isinstance(output, list) and index < len(output)
            sub = output[index] if present else _MISSING
            yield from _fields(item, sub, _child_schema(schema, index))


def element_type_scores(
    expected: Any, output: Any, schema: Mapping[str, Any] | None, *, gate: bool = True
) -> dict[str, dict[str, float | int]]:
    """Per element type: the number of such fields in `expected` and the mean key-matching
    score of the output's value at each one's path (0 where missing, or when `gate` is
    False because the output failed the syntax gate)."""
    totals: dict[str, list[float]] = {}
    for kind, want, got in _fields(expected, output, schema):
        score = key_matching(want, got) if gate and got is not _MISSING else 0.0
        totals.setdefault(kind, []).append(score)
    return {
        kind: {"fields": len(scores), "key_matching": sum(scores) / len(scores)}
        for kind, scores in sorted(totals.items(), key=lambda kv: ELEMENT_TYPES.index(kv[0]))
    }


def deepjson_scores(parsed: ParseResult, expected: Any, checker: SchemaChecker) -> dict[str, Any]:
    """Syntax, Key-matching, Strict (and valid JSON) of a parsed output, and the schema
    errors found on the way; the syntax gate zeroes all three."""
    schema_errors = checker.errors(parsed.value, SCHEMA_ERRORS_KEPT) if parsed.ok else []
    syntax = int(parsed.ok and not schema_errors)
    scores = {
        "syntax": syntax,
        "key_matching": key_matching(expected, parsed.value) if syntax else 0.0,
        "strict": int(bool(syntax) and json_equal(parsed.value, expected)),
        "valid_json": int(parsed.valid_json),
    }
    return {"scores": scores, "schema_errors": schema_errors}
