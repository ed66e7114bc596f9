"""A small EdgeJSON example (a person) that the EdgeJSON scoring tests and the tests of
its metric family work by hand: a schema with required and optional fields of every JSON
type but null, and the ground truth, which fills every field."""

from __future__ import annotations

from typing import Any

PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "active": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
PERSON: dict[str, Any] = {"name": "Ann", "age": 30, "active": True, "tags": ["a", "b"]}
