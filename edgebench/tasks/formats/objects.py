"""A JSONL file with one JSON object per line (blank lines skipped): the roundtrip corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.tasks.formats.jsonl import check_suffix, jsonl_objects

SUFFIXES = (".jsonl",)


def read_objects(dataset: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every object of the file; problems name file and line."""
    check_suffix(dataset, SUFFIXES, "roundtrip")
    objects = list(jsonl_objects(dataset))
    if not objects:
        raise UserError(f"{dataset}: no objects (the file is empty)")
    return objects
