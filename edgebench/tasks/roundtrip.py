"""The round-trip task (Structure-BiEval, arXiv:2601.19923, sections 3.2-3.4): describe a JSON
object in plain sentences, one per leaf of its IR tree, ask the model to rebuild the
object, and score the rebuild with CSA (content) and NTED (structure).

No labels are needed: any JSON object is its own answer. The corpus is, by default, the
expected outputs of the built-in EdgeJSON set (with their schemas, so the `sobench` and
constrained modes work too); `--dataset` takes a JSONL file of objects, or with
`--schemas` a dataset in the EdgeJSON layout.

The description is deterministic: a depth-first walk with object keys in sorted order,
as in the IR, and no JSON syntax except the double quotes that mark a string value:

    Under the path root/zones/0/zone, there exists a node with value "A2".
    Under the path root/zones/0/irrigating, there exists a node with value true.
    Under the path root/tags, there exists an empty list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from edgebench.scoring.ir import depth
from edgebench.tasks.base import DEFAULT_STYLE, Example, Prompt, prompt_template_for
from edgebench.tasks.edgejson import EdgeJSONTask, load_edgejson
from edgebench.tasks.formats.objects import read_objects

SYSTEM_PROMPT = (
    "You are a data converter. Convert the description into JSON. Do not output any "
    "extra text or explanations."
)
USER_TEMPLATE = (
    "Each line of the description gives a path from the root and what is found there. "
    "Path parts are object keys, or list positions counted from 0. Values in double "
    "quotes are strings; other values are numbers, true, false or null. Answer with the "
    "JSON only.\n"
    "\n"
    "Description:\n"
    "{description}\n"
    "\n"
    "JSON:"
)
PROMPT_TEMPLATE = f"[system] {SYSTEM_PROMPT}\n[user] {USER_TEMPLATE}"

# A user corpus has no schemas; any object validates.
OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}
OBJECT_SCHEMA_ID = "object"


def _render_value(value: Any) -> str:
    # Strings keep their quotes (and JSON escapes for quotes and newlines inside them),
    # which is how the description says "this is a string".
    return json.dumps(value, ensure_ascii=False)


def describe(value: Any) -> str:
    """The path description of a JSON value: one sentence per leaf, depth first."""
    lines: list[str] = []
    pending: list[tuple[Any, str]] = [(value, "root")]
    while pending:
        item, path = pending.pop()
        if isinstance(item, dict) and item:
            pending.extend((item[k], f"{path}/{k}") for k in sorted(item, reverse=True))
        elif isinstance(item, list) and item:
            pending.extend((item[i], f"{path}/{i}") for i in range(len(item) - 1, -1, -1))
        elif isinstance(item, dict):
            lines.append(f"Under the path {path}, there exists an empty object.")
        elif isinstance(item, list):
            lines.append(f"Under the path {path}, there exists an empty list.")
        else:
            lines.append(
                f"Under the path {path}, there exists a node with value {_render_value(item)}."
            )
    return "\n".join(lines)


def roundtrip_example(
    example_id: str,
    value: Any,
    schema_id: str = OBJECT_SCHEMA_ID,
    schema: dict[str, Any] | None = None,
    groups: dict[str, str] | None = None,
) -> Example:
    """An example whose input is the description of `value` and whose answer is `value`."""
    return Example(
        id=example_id,
        text=describe(value),
        schema_id=schema_id,
        schema=schema if schema is not None else OBJECT_SCHEMA,
        expected=value,
        groups={"depth": str(depth(value)), **(groups or {})},
    )


def load_objects(dataset: Path) -> list[Example]:
    """A JSONL file with one JSON object per line (blank lines skipped); ids are
    `<file stem>:<line>`."""
    return [
        roundtrip_example(f"{dataset.stem}:{number}", value)
        for number, value in read_objects(dataset)
    ]


class RoundtripTask:
    """Rebuild a JSON object from its path description; CSA, NTED and valid JSON."""

    name = "roundtrip"
    prompt_template = PROMPT_TEMPLATE
    # No published prompt to reproduce: `--prompt reference` is refused, naming the task.
    prompt_templates: ClassVar[dict[str, str]] = {"default": PROMPT_TEMPLATE}
    metric_family = "structure"

    def resolve_paths(self, dataset: Path | None, schemas: Path | None) -> tuple[Path, Path | None]:
        """Built-in EdgeJSON answers by default; a user's JSONL of objects otherwise
        (in the EdgeJSON layout when `schemas` is given)."""
        if dataset is None:
            default_dataset, default_schemas = EdgeJSONTask.default_paths()
            return default_dataset, schemas or default_schemas
        return dataset, schemas

    def load(self, dataset: Path, schemas: Path | None) -> list[Example]:
        if schemas is None:
            return load_objects(dataset)
        return [
            roundtrip_example(ex.id, ex.expected, ex.schema_id, ex.schema, ex.groups)
            for ex in load_edgejson(dataset, schemas)
        ]

    def build_prompt(self, example: Example, style: str = DEFAULT_STYLE) -> Prompt:
        prompt_template_for(self, style)
        return Prompt(system=SYSTEM_PROMPT, user=USER_TEMPLATE.format(description=example.text))
