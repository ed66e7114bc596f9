"""The DeepJSONEval format (the public release): `.jsonl` or `.xlsx`, one row per example.

Columns: `schema` (a JSON Schema), `text`, `json` (the ground truth), `category` (the
domain), `true_depth` (nesting depth 3-7) and an optional `id`; `schema` and `json` may be
JSON strings or objects. Every row carries its own schema, so there is no schema folder.
Rows edgebench generates add `meta` (an object naming the subtree they were built from).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.scoring.equality import json_kind
from edgebench.scoring.schema import get_checker
from edgebench.tasks.formats.jsonl import check_suffix, decode_json, jsonl_objects

SUFFIXES = (".jsonl", ".xlsx")
REQUIRED_COLUMNS = ("schema", "text", "json")


@dataclass(frozen=True)
class DeepJSONRow:
    where: str  # "file:line", or "file: row N" in an .xlsx: where errors point
    place: str  # "line N" or "row N": how a check table names the row
    id: str
    schema: dict[str, Any]  # a valid JSON Schema
    expected: Any
    text: str
    domain: str  # `category`, "unknown" when absent
    depth: int | None  # the `true_depth` label, None when absent
    meta: dict[str, Any] = field(default_factory=dict)


def _json_column(data: Mapping[str, Any], column: str, where: str) -> Any:
    """A column holding JSON: a string to decode, or an already decoded value."""
    value = data[column]
    return decode_json(value, where, column) if isinstance(value, str) else value


def _object_column(data: Mapping[str, Any], column: str, where: str) -> dict[str, Any]:
    value = _json_column(data, column, where)
    if not isinstance(value, dict):
        raise UserError(f"{where}: column '{column}' must be a JSON object, got {json_kind(value)}")
    return value


def _depth_label(value: Any, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise UserError(f"{where}: column 'true_depth' must be a whole number, got {value}")
    if isinstance(value, float) and value.is_integer():
        return int(value)  # spreadsheets store numbers as floats
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise UserError(f"{where}: column 'true_depth' must be a whole number, got {value!r}")


def _optional_text(
    data: Mapping[str, Any], column: str, where: str, *, whole_numbers: bool = False
) -> str | None:
    """A name column: None when absent or empty; `whole_numbers` also takes the numeric
    ids spreadsheets hold."""
    value = data.get(column)
    if value is None or value == "":
        return None
    if whole_numbers and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise UserError(f"{where}: column '{column}' must be a string")
    return value


def deepjson_row(
    data: Mapping[str, Any], where: str, default_id: str, place: str | None = None
) -> DeepJSONRow:
    """One row, read and typed; its schema is checked to be a valid JSON Schema. Whether
    the ground truth validates against it is a check of its own (`ground_truth_problem`)."""
    for column in REQUIRED_COLUMNS:
        if data.get(column) is None:
            raise UserError(f"{where}: missing column '{column}'")
    if not isinstance(data["text"], str) or not data["text"].strip():
        raise UserError(f"{where}: column 'text' must be a non-empty string")
    schema = _object_column(data, "schema", where)
    expected = _json_column(data, "json", where)
    get_checker(schema, source=f"{where}: schema")
    meta = _object_column(data, "meta", where) if data.get("meta") is not None else {}
    return DeepJSONRow(
        where=where,
        place=place or where,
        id=_optional_text(data, "id", where, whole_numbers=True) or default_id,
        schema=schema,
        expected=expected,
        text=data["text"],
        domain=_optional_text(data, "category", where) or "unknown",
        depth=_depth_label(data.get("true_depth"), where),
        meta=meta,
    )


def _raw_rows(dataset: Path, suffix: str) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """(where, place, columns) for every row of the file."""
    if suffix == ".xlsx":
        from edgebench.tasks.xlsx import read_xlsx_rows

        for number, row in read_xlsx_rows(dataset):
            yield f"{dataset}: row {number}", f"row {number}", row
    else:
        for number, row in jsonl_objects(dataset):
            yield f"{dataset}:{number}", f"line {number}", row


def read_deepjson(dataset: Path) -> list[DeepJSONRow]:
    """Every row of a DeepJSONEval `.jsonl` or `.xlsx` file, with unique ids; every problem
    is a one-line UserError naming the file and line (or sheet row) and column."""
    suffix = check_suffix(dataset, SUFFIXES, "deepjson")
    rows: list[DeepJSONRow] = []
    seen: dict[str, str] = {}
    for index, (where, place, data) in enumerate(_raw_rows(dataset, suffix), start=1):
        row = deepjson_row(data, where, f"{dataset.stem}-{index:04d}", place)
        if row.id in seen:
            raise UserError(f"{where}: duplicate id '{row.id}' (first at {seen[row.id]})")
        seen[row.id] = where
        rows.append(row)
    if not rows:
        raise UserError(f"{dataset}: no examples (the file is empty)")
    return rows
