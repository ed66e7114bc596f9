"""Read a dataset in the EdgeJSON row format and its folder of JSON Schemas.

Unreadable input (a missing file, bad JSON, a row without a prompt) is the user's to fix, so
it raises `UserError` naming the file and line; everything else is left to the checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.datagen.edgejson.spec import COMPLEXITIES
from edgebench.errors import UserError
from edgebench.io import numbered_lines, read_text_file

_TEXT_FIELDS = ("id", "schema_id", "prompt")


@dataclass(frozen=True)
class Row:
    line: int
    id: str
    schema_id: str
    complexity: str | None  # None when the row names only `schema_name` (public v3 rows)
    prompt: str
    expected: Any


@dataclass(frozen=True)
class SchemaFile:
    schema_id: str
    complexity: str | None  # the folder it sits in: schemas/<complexity>/<schema_id>.json
    path: Path
    schema: dict[str, Any]


@dataclass(frozen=True)
class Dataset:
    path: Path
    rows: list[Row]
    schemas: dict[str, SchemaFile]

    def complexity_of(self, row: Row) -> str | None:
        """The row's own complexity, else the folder of its schema."""
        if row.complexity:
            return row.complexity
        found = self.schemas.get(row.schema_id)
        return found.complexity if found else None


def _parse(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None


def _row(data: Any, where: str, line: int) -> Row:
    if not isinstance(data, dict):
        raise UserError(f"{where}: a row must be a JSON object, not {type(data).__name__}")
    for key in _TEXT_FIELDS:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UserError(f"{where}: field '{key}' must be a non-empty string")
    if "expected_output" not in data:
        raise UserError(f"{where}: row has no 'expected_output' field")
    complexity = data.get("complexity")
    if complexity is not None and complexity not in COMPLEXITIES:
        raise UserError(f"{where}: field 'complexity' must be one of {', '.join(COMPLEXITIES)}")
    return Row(
        line, data["id"], data["schema_id"], complexity, data["prompt"], data["expected_output"]
    )


def load_rows(path: Path) -> list[Row]:
    rows = []
    for number, line in numbered_lines(path, "dataset file"):
        where = f"{path}:{number}"
        rows.append(_row(_parse(line, where), where, number))
    if not rows:
        raise UserError(f"{path}: the dataset has no rows")
    return rows


def load_schemas(folder: Path) -> dict[str, SchemaFile]:
    if not folder.is_dir():
        raise UserError(f"{folder}: no such schemas folder")
    found: dict[str, SchemaFile] = {}
    for path in sorted(folder.rglob("*.json")):
        text = read_text_file(path, "schema file")
        try:
            schema = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"{path}:{exc.lineno}"
            raise UserError(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None
        if not isinstance(schema, dict):
            raise UserError(f"{path}: a schema must be a JSON object")
        if path.stem in found:
            raise UserError(f"{path}: schema '{path.stem}' is also in {found[path.stem].path}")
        level = path.parent.name if path.parent.name in COMPLEXITIES else None
        found[path.stem] = SchemaFile(path.stem, level, path, schema)
    return found


def load_dataset(dataset: Path, schemas: Path) -> Dataset:
    return Dataset(dataset, load_rows(dataset), load_schemas(schemas))
