"""A run folder checked against the published run-format JSON Schemas before it is
stored: the schemas are generated from the record types (runfolder/publish.py), the
same text as docs/schemas, so this works from any install."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from edgebench.errors import UserError
from edgebench.io import read_jsonl_numbered
from edgebench.readback import present, read_json
from edgebench.runfolder.publish import FILES, schema_name, schemas

BENCH_FILE = "bench.json"  # its name in the published format (not in a run folder)
_MESSAGE_CHARS = 160  # a validator's message quotes the value: kept to one short line


@cache
def _validators() -> dict[str, jsonschema.Draft202012Validator]:
    return {name: jsonschema.Draft202012Validator(s) for name, s in schemas().items()}


def _problem(validator: jsonschema.Draft202012Validator, data: Any) -> str | None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    message = " ".join(error.message.split())
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 1] + "…"
    return f"{error.json_path}: {message}"


def _documents(path: Path) -> list[tuple[str, Any]]:
    """(where, document) of a run file: the file itself, or each line of a JSONL file
    (a torn last line left out, as readers do)."""
    if path.suffix == ".jsonl":
        rows, _torn = read_jsonl_numbered(path)
        return [(f"{path}:{line}", row) for line, row in rows]
    return [(str(path), read_json(path, "run file"))]


def _check(path: Path, file: str) -> None:
    validator = _validators()[schema_name(file)]
    for where, document in _documents(path):
        problem = _problem(validator, document)
        if problem is not None:
            raise UserError(f"{where}: does not follow the run format ({problem})")


def check_bench_file(path: Path) -> None:
    """A file of `edgebench bench --out` valid against the published bench schema, or a
    one-line UserError naming it and the failing field."""
    _check(path, BENCH_FILE)


def check_run_folder(run_dir: Path) -> None:
    """Every run file of `run_dir` valid against its published schema, or a one-line
    UserError naming the file (and line) and the failing field."""
    for file in FILES:
        if file != BENCH_FILE and present(run_dir / file):
            _check(run_dir / file, file)
