"""The EdgeJSON v3 format: a JSONL file of rows and a folder of JSON Schemas.

Each row has `id`, `schema_id`, `prompt` (the text) and `expected_output`, plus either
`complexity` or `schema_name`; the schema folder is laid out as
`<complexity>/<schema_id>.json`. The folder decides a schema's complexity, so rows without
`complexity` still get one, and a row that states another one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import read_text_file
from edgebench.scoring.schema import get_checker
from edgebench.tasks.formats.jsonl import check_suffix, json_object, jsonl_objects

SUFFIXES = (".jsonl",)
REQUIRED_FIELDS = ("id", "schema_id", "prompt", "expected_output")
_TEXT_FIELDS = ("id", "schema_id", "prompt", "complexity")


@dataclass(frozen=True)
class EdgeJSONRow:
    line: int
    id: str
    schema_id: str
    complexity: str | None  # as the row states it; None when it names only `schema_name`
    prompt: str
    expected: Any


@dataclass(frozen=True)
class SchemaFile:
    schema_id: str
    complexity: str  # the folder it sits in
    path: Path
    schema: dict[str, Any]


@dataclass(frozen=True)
class EdgeJSONDataset:
    path: Path
    rows: list[EdgeJSONRow]
    schemas: dict[str, SchemaFile]  # the schemas the rows use, each a valid JSON Schema
    schema_files: int  # how many the folder holds, used or not

    def complexity_of(self, row: EdgeJSONRow) -> str:
        return self.schemas[row.schema_id].complexity


def _index_schemas(schemas: Path) -> dict[str, Path]:
    if not schemas.is_dir():
        raise UserError(f"{schemas}: schema folder not found")
    index: dict[str, Path] = {}
    for path in sorted(schemas.glob("*/*.json")):
        if path.stem in index:
            raise UserError(f"{path}: schema '{path.stem}' also defined in {index[path.stem]}")
        index[path.stem] = path
    return index


def _read_schema(path: Path) -> SchemaFile:
    """One schema file, checked: building its (cached) SchemaChecker validates the schema
    against its dialect's meta-schema (Draft-07 unless `$schema` names another) and
    resolves every `$ref` without fetching anything."""
    schema = json_object(read_text_file(path, "schema file"), str(path))
    get_checker(schema, source=str(path))
    return SchemaFile(path.stem, path.parent.name, path, schema)


def read_schema_folder(schemas: Path) -> dict[str, dict[str, Any]]:
    """Every schema of an EdgeJSON schema folder (`<complexity>/<id>.json`), by id."""
    return {
        schema_id: _read_schema(path).schema for schema_id, path in _index_schemas(schemas).items()
    }


def _row(data: dict[str, Any], where: str, line: int) -> EdgeJSONRow:
    for name in REQUIRED_FIELDS:
        if name not in data:
            raise UserError(f"{where}: missing field '{name}'")
    for name in _TEXT_FIELDS:
        if name in data and not isinstance(data[name], str):
            raise UserError(f"{where}: field '{name}' must be a string")
        if name in data and not data[name].strip():
            raise UserError(f"{where}: field '{name}' must not be empty")
    return EdgeJSONRow(
        line,
        data["id"],
        data["schema_id"],
        data.get("complexity"),
        data["prompt"],
        data["expected_output"],
    )


def _schema_path(row: EdgeJSONRow, where: str, index: dict[str, Path], schemas: Path) -> Path:
    """The row's schema file, whose folder must be the row's complexity when it states one."""
    path = index.get(row.schema_id)
    if path is None:
        raise UserError(
            f"{where}: unknown schema '{row.schema_id}' (no {row.schema_id}.json under {schemas})"
        )
    if row.complexity not in (None, path.parent.name):
        raise UserError(
            f"{where}: complexity '{row.complexity}' but schema '{row.schema_id}' is in "
            f"{path.parent.name}/"
        )
    return path


def read_edgejson(dataset: Path, schemas: Path) -> EdgeJSONDataset:
    """The rows of an EdgeJSON file and the schemas they use; blank lines are skipped.

    Every problem is a one-line UserError naming the file and line: the format, a
    duplicate id, a schema that is missing, unreadable or not a valid JSON Schema, a
    complexity that is not the schema's folder.
    """
    check_suffix(dataset, SUFFIXES, "edgejson")
    objects = jsonl_objects(dataset)
    index = _index_schemas(schemas)
    used: dict[str, SchemaFile] = {}
    first_line: dict[str, int] = {}  # example id -> line, for the duplicate message
    rows: list[EdgeJSONRow] = []
    for number, data in objects:
        where = f"{dataset}:{number}"
        row = _row(data, where, number)
        if row.id in first_line:
            raise UserError(
                f"{where}: duplicate id '{row.id}' (first on line {first_line[row.id]})"
            )
        first_line[row.id] = number
        path = _schema_path(row, where, index, schemas)
        if row.schema_id not in used:
            used[row.schema_id] = _read_schema(path)
        rows.append(row)
    if not rows:
        raise UserError(f"{dataset}: no examples (the file is empty)")
    return EdgeJSONDataset(dataset, rows, used, len(index))
