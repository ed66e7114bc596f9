"""The EdgeJSON task: extract a JSON object that follows a JSON Schema from a short text.

Dataset format (EdgeJSON v3): a JSONL file whose rows have `id`, `schema_id`, `prompt`
(the text) and `expected_output`, plus either `complexity` or `schema_name`; and a schema
folder laid out as `<complexity>/<schema_id>.json` (simple, medium, complex). The folder
is what decides an example's complexity, so rows without `complexity` still get one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import numbered_lines
from edgebench.resources import resource_dir
from edgebench.scoring.equality import json_kind
from edgebench.scoring.parse import InvalidJSON, decode_strict
from edgebench.scoring.schema import SchemaChecker, get_checker
from edgebench.tasks.base import Example, Prompt

REQUIRED_FIELDS = ("id", "schema_id", "prompt", "expected_output")

PROMPT_TEMPLATE = (
    "Extract the information in the text below as one JSON object that follows this "
    "JSON Schema. Use only the schema's property names; leave out properties the text "
    "does not give. Answer with the JSON object only: no explanation, no Markdown.\n"
    "\n"
    "JSON Schema:\n"
    "{schema}\n"
    "\n"
    "Text:\n"
    "{text}\n"
    "\n"
    "JSON:"
)


@dataclass(frozen=True)
class _SchemaFile:
    path: Path
    complexity: str  # the name of the folder it sits in


def _index_schemas(schemas: Path) -> dict[str, _SchemaFile]:
    if not schemas.is_dir():
        raise UserError(f"{schemas}: schema folder not found")
    index: dict[str, _SchemaFile] = {}
    for path in sorted(schemas.glob("*/*.json")):
        if path.stem in index:
            raise UserError(f"{path}: schema '{path.stem}' also defined in {index[path.stem].path}")
        index[path.stem] = _SchemaFile(path, path.parent.name)
    return index


def _read_schema(path: Path) -> dict[str, Any]:
    """Read and check one schema file; checking builds (and caches) its SchemaChecker."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read schema ({exc})") from None
    schema = json_object(text, str(path))
    get_checker(schema, source=str(path))
    return schema


def read_schema_folder(schemas: Path) -> dict[str, dict[str, Any]]:
    """Every schema of an EdgeJSON schema folder (`<complexity>/<id>.json`), by id."""
    return {schema_id: _read_schema(f.path) for schema_id, f in _index_schemas(schemas).items()}


def load_edgejson(dataset: Path, schemas: Path) -> list[Example]:
    """Load an EdgeJSON JSONL file and the schemas its rows name. Blank lines are skipped.

    Every problem is a one-line UserError naming the file and line.
    """
    lines = numbered_lines(dataset, "dataset file")
    index = _index_schemas(schemas)
    loaded: dict[str, dict[str, Any]] = {}  # schema_id -> schema, read once each
    first_line: dict[str, int] = {}  # example id -> line, for the duplicate message
    examples: list[Example] = []
    for number, line in lines:
        where = f"{dataset}:{number}"
        row = _parse_row(line, where)
        example_id, schema_id = row["id"], row["schema_id"]
        if example_id in first_line:
            raise UserError(
                f"{where}: duplicate id '{example_id}' (first on line {first_line[example_id]})"
            )
        first_line[example_id] = number
        entry = index.get(schema_id)
        if entry is None:
            raise UserError(
                f"{where}: unknown schema '{schema_id}' (no {schema_id}.json under {schemas})"
            )
        complexity = row.get("complexity", entry.complexity)
        if complexity != entry.complexity:
            raise UserError(
                f"{where}: complexity '{complexity}' but schema '{schema_id}' is in "
                f"{entry.complexity}/"
            )
        if schema_id not in loaded:
            loaded[schema_id] = _read_schema(entry.path)
        examples.append(
            Example(
                id=example_id,
                text=row["prompt"],
                schema_id=schema_id,
                schema=loaded[schema_id],
                expected=row["expected_output"],
                groups={"complexity": complexity, "schema": schema_id},
            )
        )
    if not examples:
        raise UserError(f"{dataset}: no examples (the file is empty)")
    return examples


def json_object(text: str, where: str) -> dict[str, Any]:
    """`text` decoded strictly as a JSON object; anything else is a UserError at `where`."""
    try:
        value = decode_strict(text)
    except InvalidJSON as exc:
        raise UserError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected a JSON object, got {json_kind(value)}")
    return value


def _parse_row(line: str, where: str) -> dict[str, Any]:
    row = json_object(line, where)
    for name in REQUIRED_FIELDS:
        if name not in row:
            raise UserError(f"{where}: missing field '{name}'")
    for name in ("id", "schema_id", "prompt", "complexity"):
        if name in row and not isinstance(row[name], str):
            raise UserError(f"{where}: field '{name}' must be a string")
    return row


def check_expected_outputs(
    examples: list[Example], *, check_formats: bool = False
) -> list[tuple[str, str]]:
    """(example id, reason) for each expected output that does not validate against its schema."""
    failures: list[tuple[str, str]] = []
    for example in examples:
        problems = _checker(example, check_formats).errors(example.expected)
        if problems:
            failures.append((example.id, "; ".join(problems)))
    return failures


def _checker(example: Example, check_formats: bool) -> SchemaChecker:
    return get_checker(
        example.schema, source=f"schema '{example.schema_id}'", check_formats=check_formats
    )


def render_schema(schema: Any) -> str:
    """One line, no spaces: CPU prefill time grows with every prompt token."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


class EdgeJSONTask:
    """EdgeJSON: JSONExact, field F1 and schema compliance per example."""

    name = "edgejson"
    prompt_template = PROMPT_TEMPLATE
    metric_family = "edgejson"

    @staticmethod
    def default_paths() -> tuple[Path, Path]:
        """The built-in test split and its schema folder."""
        root = resource_dir("data") / "edgejson"
        return root / "test.jsonl", root / "schemas"

    def resolve_paths(self, dataset: Path | None, schemas: Path | None) -> tuple[Path, Path | None]:
        """Built-in data by default; a user's schemas default to `schemas/` beside it."""
        if dataset is None:
            default_dataset, default_schemas = self.default_paths()
            return default_dataset, schemas or default_schemas
        return dataset, schemas or dataset.parent / "schemas"

    def load(self, dataset: Path, schemas: Path | None) -> list[Example]:
        dataset, schemas = self.resolve_paths(dataset, schemas)
        assert schemas is not None
        return load_edgejson(dataset, schemas)

    def build_prompt(self, example: Example) -> Prompt:
        user = self.prompt_template.format(schema=render_schema(example.schema), text=example.text)
        return Prompt(system=None, user=user)
