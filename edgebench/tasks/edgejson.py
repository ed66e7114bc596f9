"""The EdgeJSON task: extract a JSON object that follows a JSON Schema from a short text.

The dataset format (EdgeJSON v3: JSONL rows and a `<complexity>/<schema_id>.json` schema
folder) is read by `tasks/formats/edgejson.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from edgebench.resources import resource_dir
from edgebench.scoring.schema import DEFAULT_MAX_ERRORS
from edgebench.tasks.base import (
    DEFAULT_STYLE,
    Example,
    Prompt,
    fill_template,
    prompt_template_for,
)
from edgebench.tasks.expected import expected_errors
from edgebench.tasks.formats.edgejson import read_edgejson

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

# The EdgeJSON harness's prompt (SLMBench, benchmarks/edge_json/scripts/eval.py,
# `evaluate_example`): no schema, the row's text after "Input:".
REFERENCE_TEMPLATE = (
    "Extract the structured JSON data from the following text.\n\nInput: {text}\n\nOutput:"
)


def load_edgejson(dataset: Path, schemas: Path) -> list[Example]:
    """The examples of an EdgeJSON file (`formats.edgejson.read_edgejson`: every problem is
    a one-line UserError naming the file and line). Whether each expected output
    validates against its schema is checked by the run (`tasks/expected.py`)."""
    data = read_edgejson(dataset, schemas)
    return [
        Example(
            id=row.id,
            text=row.prompt,
            schema_id=row.schema_id,
            schema=data.schemas[row.schema_id].schema,
            expected=row.expected,
            groups={"complexity": data.complexity_of(row), "schema": row.schema_id},
            where=f"{dataset}:{row.line}",
        )
        for row in data.rows
    ]


def check_expected_outputs(
    examples: list[Example], *, check_formats: bool = False
) -> list[tuple[str, str]]:
    """(example id, reason) for each expected output that does not validate against its schema."""
    failures: list[tuple[str, str]] = []
    for example in examples:
        problems = expected_errors(example, check_formats=check_formats, limit=DEFAULT_MAX_ERRORS)
        if problems:
            failures.append((example.id, "; ".join(problems)))
    return failures


def render_schema(schema: Any) -> str:
    """One line, no spaces: CPU prefill time grows with every prompt token."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


class EdgeJSONTask:
    """EdgeJSON: JSONExact, field F1 and schema compliance per example."""

    name = "edgejson"
    prompt_template = PROMPT_TEMPLATE
    prompt_templates: ClassVar[dict[str, str]] = {
        "default": PROMPT_TEMPLATE,
        "reference": REFERENCE_TEMPLATE,
    }
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

    def build_prompt(self, example: Example, style: str = DEFAULT_STYLE) -> Prompt:
        template = prompt_template_for(self, style)
        user = fill_template(template, schema=render_schema(example.schema), text=example.text)
        return Prompt(system=None, user=user)
