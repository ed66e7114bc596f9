"""Examples under two schemas and fake backends per constraint mode, for the tests of
constraint modes in-process (tests/unit/constraints) and in worker processes
(tests/system)."""

from __future__ import annotations

from typing import Any

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.constraints import parse_modes
from edgebench.runner.workers import WorkerFactory
from edgebench.tasks.base import Example
from tests.helpers.fakes import RIGHT, WRONG

SCHEMA_A: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
SCHEMA_B: dict[str, Any] = {
    "type": "object",
    "properties": {"b": {"type": "string", "pattern": "\\s+"}},
}
# Three levels deep (an array of objects in an object in an object), for closing tests.
NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "order": {
            "type": "object",
            "properties": {
                "lines": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                        "required": ["sku", "qty"],
                        "additionalProperties": False,
                    },
                },
                "status": {"enum": ["open", "paid"]},
            },
            "required": ["lines", "status"],
            "additionalProperties": False,
        },
        "id": {"type": "string"},
    },
    "required": ["order", "id"],
}

# What the fake answers to e0, e1, e2 in that order: json_exact 1, 0, 1.
OUTPUTS = [RIGHT, WRONG, RIGHT]


def examples() -> list[Example]:
    """e0 and e2 under schema `alpha`, e1 under `beta`; every one expects {"a": 1}.
    e1's text holds "three" (a crash marker for worker tests)."""
    return [
        Example("e0", "one two", "alpha", SCHEMA_A, {"a": 1}, {"complexity": "simple"}),
        Example("e1", "three four", "beta", SCHEMA_B, {"a": 1}, {"complexity": "medium"}),
        Example("e2", "five six", "alpha", SCHEMA_A, {"a": 1}, {"complexity": "simple"}),
    ]


def fakes(modes: str, **options: Any) -> dict[str, FakeBackend]:
    """One fake backend per mode, each answering OUTPUTS."""
    return {m: FakeBackend(list(OUTPUTS), **options) for m in parse_modes(modes)}


def per_mode(backends: dict[str, FakeBackend]) -> WorkerFactory:
    """Each arm's worker around its mode's backend, in this process."""
    return lambda model, mode: InProcessWorker(backends[mode])
