"""Short builders for the Draft-07 JSON Schemas of the built-in EdgeJSON-style dataset.

Keeping them in one place makes every schema spell its keywords the same way: a description
on every field, `additionalProperties: false` on every object, `format` only as an
annotation (date, date-time, email) and never a `pattern` (grammar converters choke on them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Schema = dict[str, Any]

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _with_bounds(schema: Schema, minimum: float | None, maximum: float | None) -> Schema:
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def string(description: str) -> Schema:
    return {"type": "string", "description": description}


def formatted(fmt: str, description: str) -> Schema:
    """A string with a `format` annotation: "date", "date-time" or "email"."""
    return {"type": "string", "format": fmt, "description": description}


def integer(description: str, minimum: int | None = None, maximum: int | None = None) -> Schema:
    return _with_bounds({"type": "integer", "description": description}, minimum, maximum)


def number(description: str, minimum: float | None = None, maximum: float | None = None) -> Schema:
    return _with_bounds({"type": "number", "description": description}, minimum, maximum)


def boolean(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def enum(description: str, values: Sequence[str]) -> Schema:
    return {"type": "string", "enum": list(values), "description": description}


def array(
    description: str,
    items: Schema,
    max_items: int | None = None,
    unique: bool = False,
) -> Schema:
    """A non-empty array; `unique` for sets such as weekdays or detected object kinds."""
    schema: Schema = {"type": "array", "description": description, "items": items, "minItems": 1}
    if max_items is not None:
        schema["maxItems"] = max_items
    if unique:
        schema["uniqueItems"] = True
    return schema


def obj(
    properties: Mapping[str, Schema],
    optional: Sequence[str] = (),
    description: str | None = None,
) -> Schema:
    """A closed object; every property is required unless named in `optional`."""
    schema: Schema = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = dict(properties)
    schema["required"] = [name for name in properties if name not in optional]
    schema["additionalProperties"] = False
    return schema


def document(
    title: str, description: str, properties: Mapping[str, Schema], optional: Sequence[str]
) -> Schema:
    """The top-level schema document of one schema type."""
    body = obj(properties, optional)
    return {"$schema": DRAFT_07, "title": title, "description": description, **body}
