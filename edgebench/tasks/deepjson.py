"""The DeepJSONEval task (paper 000): extract a deeply nested JSON object from a long text.

Dataset format (the public DeepJSONEval release, `.jsonl` or `.xlsx`): one row per
example with columns `schema` (a JSON Schema), `text`, `json` (the ground truth),
`category` (the domain) and `true_depth` (nesting depth 3-7); `schema` and `json` may be
JSON strings or objects. An optional `id` column names the example. Every row carries its
own schema, so there is no schema folder.

Depth is counted as the paper's property tree counts it: the root object is level 1 and
every property adds a level below its parent; an array of objects adds one level (the
array property), its items' properties sit directly below it. So
`{"Ratings": [{"Source": ...}]}` has depth 3: root, Ratings, Source.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import numbered_lines
from edgebench.resources import resource_dir
from edgebench.scoring.equality import json_kind
from edgebench.scoring.parse import InvalidJSON, decode_strict
from edgebench.scoring.schema import get_checker
from edgebench.tasks.base import Example, Prompt
from edgebench.tasks.edgejson import json_object, render_schema

REQUIRED_COLUMNS = ("schema", "text", "json")
DATASET_SUFFIXES = (".jsonl", ".xlsx")

# The benchmark's task rules: map the text to the schema, keep its hierarchy, extract
# only what the text states, answer in a ```json block.
PROMPT_TEMPLATE = (
    "Read the text below and extract its information as one JSON object that follows "
    "the JSON Schema.\n"
    "Rules:\n"
    "1. Map the text to the schema: use the schema's property names and value types "
    "exactly.\n"
    "2. Keep the schema's hierarchy: nest objects and arrays exactly as the schema does.\n"
    "3. Extract only what the text says: never invent a value.\n"
    "4. Answer with the JSON object in a single ```json code block and nothing else.\n"
    "\n"
    "JSON Schema:\n"
    "{schema}\n"
    "\n"
    "Text:\n"
    "{text}"
)


def difficulty_of(depth: int) -> str:
    """The paper's tiers: Medium = depth 3-4, Hard = 5-7."""
    if 3 <= depth <= 4:
        return "medium"
    if 5 <= depth <= 7:
        return "hard"
    return "outside 3-7"


def _property_depth(schema: Any) -> int:
    """Levels a property occupies: 1, plus the deepest of its own properties."""
    if not isinstance(schema, Mapping):
        return 1
    items = schema.get("items")
    if isinstance(items, Mapping) and isinstance(items.get("properties"), Mapping):
        schema = items  # an array of objects: its items' properties sit below it
    props = schema.get("properties")
    if isinstance(props, Mapping) and props:
        return 1 + max(_property_depth(child) for child in props.values())
    return 1


def schema_depth(schema: Mapping[str, Any]) -> int:
    """Nesting depth of a schema, the root object counting as level 1."""
    return _property_depth(schema)


def value_depth(value: Any) -> int:
    """The same count on a JSON value (arrays of objects are transparent)."""
    if isinstance(value, list):
        return max((value_depth(item) for item in value if isinstance(item, dict)), default=1)
    if isinstance(value, dict) and value:
        return 1 + max(value_depth(child) for child in value.values())
    return 1


def _json_value(value: Any, where: str, column: str) -> Any:
    """A column holding JSON: a string to decode, or an already decoded object."""
    if isinstance(value, str):
        try:
            return decode_strict(value)
        except InvalidJSON as exc:
            raise UserError(f"{where}: column '{column}' is not valid JSON ({exc})") from None
    return value


def _depth_label(value: Any, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise UserError(f"{where}: column 'true_depth' must be a whole number, got {value}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise UserError(f"{where}: column 'true_depth' must be a whole number, got {value!r}")


def example_from_row(row: Mapping[str, Any], where: str, default_id: str) -> Example:
    """One dataset row as an Example; problems are one-line UserErrors naming `where`."""
    for column in REQUIRED_COLUMNS:
        if row.get(column) is None:
            raise UserError(f"{where}: missing column '{column}'")
    if not isinstance(row["text"], str) or not row["text"].strip():
        raise UserError(f"{where}: column 'text' must be a non-empty string")
    schema = _json_value(row["schema"], where, "schema")
    if not isinstance(schema, dict):
        raise UserError(f"{where}: column 'schema' must be a JSON object, got {json_kind(schema)}")
    expected = _json_value(row["json"], where, "json")
    checker = get_checker(schema, source=f"{where}: schema")
    problems = checker.errors(expected, 1)
    if problems:
        raise UserError(f"{where}: the ground truth does not match its schema ({problems[0]})")
    depth = _depth_label(row.get("true_depth"), where) or schema_depth(schema)
    domain = row.get("category")
    example_id = row.get("id")
    if example_id is not None and not isinstance(example_id, str | int):
        raise UserError(f"{where}: column 'id' must be a string")
    return Example(
        id=str(example_id) if example_id not in (None, "") else default_id,
        text=row["text"],
        schema_id=str(example_id) if example_id not in (None, "") else default_id,
        schema=schema,
        expected=expected,
        budget_key=f"depth-{depth}",
        groups={
            "depth": str(depth),
            "difficulty": difficulty_of(depth),
            "domain": str(domain) if domain not in (None, "") else "unknown",
        },
    )


def _jsonl_rows(dataset: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{dataset}:{number}", json_object(line, f"{dataset}:{number}"))
        for number, line in numbered_lines(dataset, "dataset file")
    ]


def _xlsx_rows(dataset: Path) -> list[tuple[str, dict[str, Any]]]:
    from edgebench.tasks.xlsx import read_xlsx_rows

    return [(f"{dataset}: row {number}", row) for number, row in read_xlsx_rows(dataset)]


def load_deepjson(dataset: Path) -> list[Example]:
    """Every row of a DeepJSONEval `.jsonl` or `.xlsx` file, checked (schema valid, ground
    truth valid against it, unique ids) before anything heavy happens."""
    suffix = dataset.suffix.lower()
    if suffix not in DATASET_SUFFIXES:
        raise UserError(
            f"{dataset}: unsupported dataset format '{suffix or dataset.name}' "
            f"(deepjson reads {' or '.join(DATASET_SUFFIXES)})"
        )
    rows = _xlsx_rows(dataset) if suffix == ".xlsx" else _jsonl_rows(dataset)
    examples: list[Example] = []
    seen: dict[str, str] = {}
    for index, (where, row) in enumerate(rows, start=1):
        example = example_from_row(row, where, default_id=f"{dataset.stem}-{index:04d}")
        if example.id in seen:
            raise UserError(f"{where}: duplicate id '{example.id}' (first at {seen[example.id]})")
        seen[example.id] = where
        examples.append(example)
    if not examples:
        raise UserError(f"{dataset}: no examples (the file is empty)")
    return examples


class DeepJSONTask:
    """DeepJSONEval: Syntax, Key-matching and Strict scores, by depth, domain and type.

    Every row has a schema of its own (its `schema_id` is the example id), so a token
    budget per schema would be sized from that row's own answer, an oracle. Examples
    carry `budget_key = "depth-N"` instead: the automatic budget is the longest expected
    answer of that depth in the dataset x 1.25 + 32.
    """

    name = "deepjson"
    prompt_template = PROMPT_TEMPLATE
    metric_family = "deepjson"

    @staticmethod
    def default_dataset() -> Path:
        """The built-in set generated by `edgebench data generate deepjson`."""
        return resource_dir("data") / "deepjson" / "test.jsonl"

    def resolve_paths(self, dataset: Path | None, schemas: Path | None) -> tuple[Path, None]:
        if schemas is not None:
            raise UserError("--schemas does not apply to deepjson: every row has its own schema")
        return dataset or self.default_dataset(), None

    def load(self, dataset: Path, schemas: Path | None) -> list[Example]:
        dataset, _ = self.resolve_paths(dataset, schemas)
        return load_deepjson(dataset)

    def build_prompt(self, example: Example) -> Prompt:
        user = self.prompt_template.format(schema=render_schema(example.schema), text=example.text)
        return Prompt(system=None, user=user)
