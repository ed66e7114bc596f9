"""The shape of a schema: its leaf fields and nesting, and the bounds per complexity level.

A field is a leaf path: `store.name` for a nested object, `items[].price` for the objects of
an array, and `tags` for an array of primitives (one field holding a list).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from edgebench.datagen.edgejson.schema_dsl import Schema

# The EdgeJSON paper caps outputs at a size a 135M model can write; we hold complex rows to it.
MAX_LEAF_VALUES = 60


@dataclass(frozen=True)
class Leaf:
    path: str
    required: bool  # required at every level from the top down to this field


def _is_object(schema: Schema) -> bool:
    return schema.get("type") == "object" and isinstance(schema.get("properties"), dict)


def _object_items(schema: Schema) -> Schema | None:
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and _is_object(items):
        return items
    return None


def leaves(schema: Schema, prefix: str = "", required: bool = True) -> list[Leaf]:
    """The leaf fields below an object schema, in declaration order."""
    wanted = set(schema.get("required", []))
    found: list[Leaf] = []
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        is_required = required and name in wanted
        items = _object_items(sub)
        if _is_object(sub):
            found += leaves(sub, f"{path}.", is_required)
        elif items is not None:
            found += leaves(items, f"{path}[].", is_required)
        else:
            found.append(Leaf(path, is_required))
    return found


def _depth(schema: Schema) -> int:
    if _is_object(schema):
        return 1 + max((_depth(sub) for sub in schema["properties"].values()), default=0)
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return 1 + _depth(schema["items"])
    return 0


def nesting(schema: Schema) -> int:
    """0 when flat, 1 with a nested object or list of primitives, 2 with a list of objects."""
    return max((_depth(sub) for sub in schema.get("properties", {}).values()), default=0)


def has_object_array(schema: Schema) -> bool:
    def walk(node: Any) -> Iterator[bool]:
        if isinstance(node, dict):
            yield _object_items(node) is not None
            for value in node.values():
                yield from walk(value)

    return any(walk(schema.get("properties", {})))


def leaf_values(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) for every primitive in a JSON value: `items[0].price`, `tags[1]`."""
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from leaf_values(sub, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from leaf_values(sub, f"{path}[{index}]")
    else:
        yield path, value


def count_values(value: Any) -> int:
    """How many primitive values a JSON value holds (each list element counts)."""
    return sum(1 for _ in leaf_values(value))


@dataclass(frozen=True)
class Bounds:
    """What a schema of one complexity level may look like."""

    min_fields: int
    max_fields: int | None
    min_nesting: int
    max_nesting: int | None
    needs_object_array: bool
    summary: str

    def problems(self, schema: Schema) -> list[str]:
        fields, depth = len(leaves(schema)), nesting(schema)
        found = []
        if fields < self.min_fields or (self.max_fields is not None and fields > self.max_fields):
            found.append(f"{fields} fields")
        if depth < self.min_nesting or (self.max_nesting is not None and depth > self.max_nesting):
            found.append(f"nesting depth {depth}")
        if self.needs_object_array and not has_object_array(schema):
            found.append("no array of objects")
        return found


BOUNDS: dict[str, Bounds] = {
    "simple": Bounds(2, 4, 0, 0, False, "2-4 fields, flat"),
    "medium": Bounds(5, 8, 1, 1, False, "5-8 fields, one nesting level"),
    "complex": Bounds(9, None, 2, None, True, "9+ fields with an array of objects"),
}
