"""Tasks by name, imported lazily."""

from __future__ import annotations

import importlib

from edgebench.errors import UserError
from edgebench.tasks.base import Task

_TASKS: dict[str, tuple[str, str]] = {
    "deepjson": ("edgebench.tasks.deepjson", "DeepJSONTask"),
    "edgejson": ("edgebench.tasks.edgejson", "EdgeJSONTask"),
    "roundtrip": ("edgebench.tasks.roundtrip", "RoundtripTask"),
    "schemas": ("edgebench.tasks.schemas", "SchemasTask"),
}


def task_names() -> list[str]:
    return sorted(_TASKS)


def get_task(name: str) -> Task:
    try:
        module_name, class_name = _TASKS[name]
    except KeyError:
        raise UserError(f"unknown task '{name}' (known: {', '.join(task_names())})") from None
    return getattr(importlib.import_module(module_name), class_name)()
