"""JSONSchemaBench as a task (`--task schemas`): real-world JSON Schemas without answers
("Generating Structured Outputs from Language Models: Benchmark and Studies",
arXiv:2501.10868). The model is asked for any JSON object that conforms to the schema;
the scores are whether it parses and whether it validates (metric family `schemas`), and
per constraint engine the coverage: schemas compiled, refused, or lost with the worker.

The release layout is read by `tasks/formats/jsonschemabench.py`. Every example has its
own schema and no expected answer (`expected=None`): the token budget is the fixed rule
for unlabelled examples (runner/budget.py), not sized from an answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from edgebench.errors import UserError
from edgebench.tasks.base import DEFAULT_STYLE, Example, Prompt, fill_template, prompt_template_for
from edgebench.tasks.edgejson import render_schema
from edgebench.tasks.formats.jsonschemabench import ReleaseSchema, read_schemas

PROMPT_TEMPLATE = (
    "Write one JSON object that conforms to the JSON Schema below: a realistic instance "
    "with every required property. Answer with the JSON object only: no explanation, no "
    "Markdown.\n"
    "\n"
    "JSON Schema:\n"
    "{schema}"
)

# The benchmark's own prompt at zero shots: this system line, then the schema as the
# user's message (`json.dumps`, Python's default separators). The paper's runs add two
# hand-written examples per subset as earlier turns; those are not bundled here.
REFERENCE_SYSTEM = "You need to generate a JSON object that matches the schema below."
REFERENCE_USER = "{schema}"
REFERENCE_TEMPLATE = f"[system] {REFERENCE_SYSTEM}\n[user] {REFERENCE_USER}"
PROMPT_TEMPLATES = {"default": PROMPT_TEMPLATE, "reference": REFERENCE_TEMPLATE}


def _example(row: ReleaseSchema) -> Example:
    return Example(
        id=row.id,
        text="",  # the schema is the whole input
        schema_id=row.id,
        schema=row.schema,
        expected=None,
        groups={"subset": row.subset},
    )


def load_schemas(dataset: Path) -> list[Example]:
    """One example per schema file of a release-shaped folder."""
    return [_example(row) for row in read_schemas(dataset)]


def render_reference_schema(schema: Any) -> str:
    """The schema as the benchmark's harness pastes it: `json.dumps` with its defaults."""
    return json.dumps(schema)


class SchemasTask:
    """JSONSchemaBench: validity, schema compliance and engine coverage per subset."""

    name = "schemas"
    prompt_template = PROMPT_TEMPLATE
    prompt_templates: ClassVar[dict[str, str]] = PROMPT_TEMPLATES
    metric_family = "schemas"

    def resolve_paths(self, dataset: Path | None, schemas: Path | None) -> tuple[Path, None]:
        if schemas is not None:
            raise UserError("--schemas does not apply to schemas: --dataset is the schema folder")
        if dataset is None:
            raise UserError(
                "--task schemas needs --dataset: the JSONSchemaBench data/ folder "
                "(data/<Subset>/<name>.json)"
            )
        return dataset, None

    def load(self, dataset: Path, schemas: Path | None) -> list[Example]:
        dataset, _ = self.resolve_paths(dataset, schemas)
        return load_schemas(dataset)

    def build_prompt(self, example: Example, style: str = DEFAULT_STYLE) -> Prompt:
        template = prompt_template_for(self, style)  # an unknown style: one line
        if style == "reference":
            return Prompt(system=REFERENCE_SYSTEM, user=render_reference_schema(example.schema))
        return Prompt(
            system=None, user=fill_template(template, schema=render_schema(example.schema))
        )
