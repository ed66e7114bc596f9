"""Tasks by name, imported lazily. Each task's facts that the command line, plans and
views need without loading it (its help note, published scorer, dataset shape, the
groups its examples carry and the order tables show them in) are declared here, once,
in its `TaskInfo`; what it does is its class."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from edgebench.errors import UserError
from edgebench.tasks.base import Task


@dataclass(frozen=True)
class TaskInfo:
    name: str
    module: str
    class_name: str
    note: str  # beside the name in --task's help
    # The task's published scorer (its extraction in scoring/extract.py: --parse reference)
    reference: str | None = None
    dataset_folder: bool = False  # --dataset (and a plan's `dataset`) is a folder, not a file
    groups: tuple[str, ...] = ()  # the groups each example carries (--stratify's help)
    # The group the accuracy table breaks results down by, then one shown under it
    table_groups: tuple[str, ...] = ()
    # A group's rows in reading order rather than the summary's alphabetical one
    row_order: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


_INFOS = (
    TaskInfo(
        "deepjson",
        "edgebench.tasks.deepjson",
        "DeepJSONTask",
        note="nested extraction, accuracy by depth",
        reference="deepjsoneval",
        groups=("depth", "difficulty", "domain"),
        table_groups=("depth", "difficulty"),
        row_order=MappingProxyType({"difficulty": ("medium", "hard")}),
    ),
    TaskInfo(
        "edgejson",
        "edgebench.tasks.edgejson",
        "EdgeJSONTask",
        note="extraction",
        reference="edgejson-harness",
        groups=("complexity", "schema"),
        table_groups=("complexity",),
    ),
    TaskInfo(
        "roundtrip",
        "edgebench.tasks.roundtrip",
        "RoundtripTask",
        note="reproduce a JSON object",
        groups=("depth",),
        table_groups=("depth",),
    ),
    TaskInfo(
        "schemas",
        "edgebench.tasks.schemas",
        "SchemasTask",
        note="JSONSchemaBench: any answer valid against the schema",
        reference="jsonschemabench",
        dataset_folder=True,
        groups=("subset",),
        table_groups=("subset",),
    ),
)
TASKS: Mapping[str, TaskInfo] = MappingProxyType({info.name: info for info in _INFOS})
DEFAULT_TASK = "edgejson"  # `--task`'s default: the project's own dataset


def task_names() -> list[str]:
    return sorted(TASKS)


def task_info(name: str) -> TaskInfo:
    """The declaration of task `name`; a one-line error naming the known ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise UserError(f"unknown task '{name}' (known: {', '.join(task_names())})") from None


def reference_of(task: str) -> str | None:
    """The name of `task`'s published scorer; None when it has none or is not known here
    (a record written by another version)."""
    info = TASKS.get(task)
    return info.reference if info is not None else None


def get_task(name: str) -> Task:
    info = task_info(name)
    return getattr(importlib.import_module(info.module), info.class_name)()  # type: ignore[no-any-return]
