"""Strict JSON for dataset files: the parser that scores model outputs (no NaN/Infinity,
no out-of-range numbers), a bound on nesting, and JSONL files read line by line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import numbered_lines
from edgebench.scoring.equality import json_kind
from edgebench.scoring.ir import depth
from edgebench.scoring.strict import InvalidJSON, decode_strict

# Deeper values overflow the stack later, in jsonschema's recursive checks (a schema
# ~200 levels deep already does) or in the depth counts; real extraction data stays
# far below (a DeepJSONEval depth-7 schema nests about 25 levels).
MAX_NESTING = 100
_TOO_DEEP = f"JSON nested too deeply: more than {MAX_NESTING} levels"
_BOM = "\ufeff"


def decode_json(text: str, where: str, column: str | None = None) -> Any:
    """`text` decoded strictly; anything refused is a UserError at `where` (and `column`,
    for a JSON document held in one column of a row)."""
    subject = f"column '{column}' is not valid JSON" if column else "not valid JSON"
    if text.startswith(_BOM):
        # Python's json.loads (the published scorers' reader) refuses it too.
        raise UserError(
            f"{where}: {subject} (it starts with a UTF-8 byte order mark, BOM: save the file "
            "as UTF-8 without BOM)"
        )
    try:
        value = decode_strict(text)
    except InvalidJSON as exc:
        # The decoder's own limit depends on the stack in use; say the fixed one instead.
        reason = _TOO_DEEP if exc.too_deep else str(exc)
        raise UserError(f"{where}: {subject} ({reason})") from None
    if (levels := depth(value)) > MAX_NESTING:
        raise UserError(
            f"{where}: {subject} (JSON nested too deeply: {levels} levels, limit {MAX_NESTING})"
        )
    return value


def json_object(text: str, where: str) -> dict[str, Any]:
    """`text` decoded strictly as a JSON object; anything else is a UserError at `where`."""
    value = decode_json(text, where)
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected a JSON object, got {json_kind(value)}")
    return value


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of a JSONL file of objects. The file
    is read now; its lines are decoded one at a time, so that a reader checking each row
    as it comes reports the first problem in the file."""
    lines = numbered_lines(path, "dataset file")
    return ((number, json_object(line, f"{path}:{number}")) for number, line in lines)


def check_suffix(path: Path, suffixes: tuple[str, ...], reader: str) -> str:
    """The file's suffix (lower case) when `reader` reads it; else a UserError."""
    suffix = path.suffix.lower()
    if suffix not in suffixes:
        raise UserError(
            f"{path}: unsupported dataset format '{suffix or path.name}' "
            f"({reader} reads {' or '.join(suffixes)})"
        )
    return suffix
