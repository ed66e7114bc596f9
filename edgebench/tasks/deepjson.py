"""The DeepJSONEval task (arXiv:2509.25922): extract a deeply nested JSON object from a long text.

The dataset format (the public DeepJSONEval release, `.jsonl` or `.xlsx`, every row with
its own schema) is read by `tasks/formats/deepjson.py`.

Depth is counted as the paper's property tree counts it: the root object is level 1 and
every property adds a level below its parent; an array of objects adds one level (the
array property), its items' properties sit directly below it. So
`{"Ratings": [{"Source": ...}]}` has depth 3: root, Ratings, Source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from edgebench.errors import UserError
from edgebench.resources import resource_dir
from edgebench.scoring.schema import get_checker
from edgebench.tasks.base import (
    DEFAULT_STYLE,
    Example,
    Prompt,
    fill_template,
    prompt_template_for,
)
from edgebench.tasks.edgejson import render_schema
from edgebench.tasks.formats.deepjson import DeepJSONRow, deepjson_row, read_deepjson

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

# DeepJSONEval's own prompt (GTS-AI-Infra-Lab-SotaS/DeepJSONEval: JSON_Output_meta_prompt.txt,
# joined by running_inference.py as meta prompt + "\n" + schema and text sections), byte
# for byte: trailing double spaces, rule 5 (strings keep the text's language) and the
# literal backslash-n of rule 6 included. The file's CRLF line ends reach the model as "\n"
# (utils.load_file reads it in text mode).
REFERENCE_META_PROMPT = (
    "*** Task Scenario  \n"
    "This is a text information extraction scenario. You need to map relevant content from "
    "the user's natural language text description to the given JSON Schema and finally "
    "output a JSON Object.  \n"
    "\n"
    "*** Summary of Input Information:  \n"
    "1. JSON Schema  \n"
    "2. Text Description  \n"
    "\n"
    "*** Task Rules  \n"
    "1. Strictly follow JSON format for mapping.  \n"
    "2. Strictly adhere to the hierarchical relationships in the JSON Schema.  \n"
    "3. Understand the requirements of each property in the JSON Schema and correctly match "
    "content from the text description.  \n"
    "4. All output content in the mapped JSON must be strictly extracted from the user's "
    "input information.  \n"
    "5. If the field description does not explicitly specify a language type, string-type "
    "fields must match the language type of the text description.  \n"
    "6. The final JSON Object must be output in Markdown format, i.e., "
    "```json\\n{JSON Object}\\n```.\n"
)
REFERENCE_TEMPLATE = (
    REFERENCE_META_PROMPT + "\n" + "*** JSON Schema\n{schema}\n\n*** Text Description\n{text}"
)


def render_reference_schema(schema: Any) -> str:
    """The schema as the release's `schema` column holds it and the benchmark pastes it:
    two-space indents, non-ASCII kept (reproduces every public sample row exactly)."""
    return json.dumps(schema, indent=2, ensure_ascii=False)


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


def ground_truth_problem(row: DeepJSONRow) -> str | None:
    """Why the row's ground truth does not validate against its schema; None when it does.
    `data validate` lists every such row; `run` leaves them out (`tasks/expected.py`), or
    refuses the file at the first one with `--strict-data`."""
    problems = get_checker(row.schema, source=f"{row.where}: schema").errors(row.expected, 1)
    return problems[0] if problems else None


def _example(row: DeepJSONRow) -> Example:
    depth = row.depth or schema_depth(row.schema)
    return Example(
        id=row.id,
        text=row.text,
        schema_id=row.id,
        schema=row.schema,
        expected=row.expected,
        budget_key=f"depth-{depth}",
        groups={"depth": str(depth), "difficulty": difficulty_of(depth), "domain": row.domain},
        where=row.where,
    )


def example_from_row(row: Mapping[str, Any], where: str, default_id: str) -> Example:
    """One dataset row as an Example; problems are one-line UserErrors naming `where`."""
    return _example(deepjson_row(row, where, default_id))


def load_deepjson(dataset: Path) -> list[Example]:
    """Every row of a DeepJSONEval `.jsonl` or `.xlsx` file, checked (valid schema, unique
    ids) before anything heavy happens; the run checks each ground truth against its
    schema (`tasks/expected.py`)."""
    return [_example(row) for row in read_deepjson(dataset)]


class DeepJSONTask:
    """DeepJSONEval: Syntax, Key-matching and Strict scores, by depth, domain and type.

    Every row has a schema of its own (its `schema_id` is the example id), so a token
    budget per schema would be sized from that row's own answer, an oracle. Examples
    carry `budget_key = "depth-N"` instead: the automatic budget is the longest expected
    answer of that depth in the dataset x 1.25 + 32.
    """

    name = "deepjson"
    prompt_template = PROMPT_TEMPLATE
    prompt_templates: ClassVar[dict[str, str]] = {
        "default": PROMPT_TEMPLATE,
        "reference": REFERENCE_TEMPLATE,
    }
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

    def build_prompt(self, example: Example, style: str = DEFAULT_STYLE) -> Prompt:
        template = prompt_template_for(self, style)
        render = render_reference_schema if style == "reference" else render_schema
        user = fill_template(template, schema=render(example.schema), text=example.text)
        return Prompt(system=None, user=user)
