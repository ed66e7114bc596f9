"""Turn the catalog into dataset rows and write the dataset folder.

Reproducible by construction: each schema type draws from its own `random.Random` seeded
with "<seed>/<schema_id>" (so adding a schema leaves the others' rows unchanged), files are
written with fixed key order, indentation and "\n" line ends, and nothing depends on the
clock or the machine.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from edgebench.datagen.edgejson import rules
from edgebench.datagen.edgejson.catalog import ALL_SPECS
from edgebench.datagen.edgejson.prose import render
from edgebench.datagen.edgejson.schema_dsl import Schema
from edgebench.datagen.edgejson.spec import COMPLEXITIES, SchemaSpec
from edgebench.datagen.edgejson.text_checks import prompt_key
from edgebench.datagen.edgejson.values import Draw
from edgebench.errors import UserError
from edgebench.io import json_text, jsonl_text, write_text_files

GENERATOR_VERSION = "1.0"
DEFAULT_SEED = 17
DEFAULT_EXAMPLES_PER_SCHEMA = 8
DATASET_FILE = "test.jsonl"
MANIFEST_FILE = "generation.json"

# How often an optional field is left out of both the text and the expected output.
OPTIONAL_DROP_RATE = 0.3
_MAX_ATTEMPTS = 200
_INSTRUCTIONS = (
    "Extract the {noun} as JSON.",
    "Extract the {noun} from this message as JSON.",
    "Extract the {noun} details as JSON.",
)


def _ordered(value: Any, schema: Schema) -> Any:
    """`value` with object keys in the schema's property order, at every level."""
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {key: _ordered(value[key], props[key]) for key in props if key in value}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_ordered(item, schema["items"]) for item in value]
    return value


def _record(spec: SchemaSpec, draw: Draw) -> dict[str, Any]:
    record = spec.sample(draw)
    for name in spec.optional:
        if draw.chance(OPTIONAL_DROP_RATE):
            record.pop(name, None)
    rules.apply(spec.rules, record)
    return _ordered(record, spec.json_schema())


def _template_order(draw: Draw, count: int, templates: int) -> list[int]:
    """Template indexes in shuffled rounds, so every template is used about equally."""
    order: list[int] = []
    while len(order) < count:
        round_ = list(range(templates))
        draw.rng.shuffle(round_)
        order += round_
    return order[:count]


def _example(
    spec: SchemaSpec, draw: Draw, template: str, seen: set[str]
) -> tuple[str, dict[str, Any]]:
    for _ in range(_MAX_ATTEMPTS):
        record = _record(spec, draw)
        instruction = draw.pick(_INSTRUCTIONS).format(noun=spec.noun)
        prompt = f"{render(template, record, spec.parts)}\n\n{instruction}"
        if prompt_key(prompt) not in seen:
            seen.add(prompt_key(prompt))
            return prompt, record
    raise RuntimeError(f"{spec.schema_id}: could not draw a new prompt; its word lists are small")


def generate_rows(
    seed: int = DEFAULT_SEED,
    examples_per_schema: int = DEFAULT_EXAMPLES_PER_SCHEMA,
    specs: Sequence[SchemaSpec] = ALL_SPECS,
) -> list[dict[str, Any]]:
    """The dataset rows, in the EdgeJSON v3 row format, in a seeded shuffled order so that
    `edgebench run --limit N` takes a mix of schemas and complexities, not the first few."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for spec in specs:
        draw = Draw(random.Random(f"{seed}/{spec.schema_id}"))
        order = _template_order(draw, examples_per_schema, len(spec.templates))
        for index, template_index in enumerate(order):
            prompt, expected = _example(spec, draw, spec.templates[template_index], seen)
            rows.append(
                {
                    "id": f"edgebench_{spec.schema_id}_{index:03d}",
                    "schema_id": spec.schema_id,
                    "complexity": spec.complexity,
                    "prompt": prompt,
                    "expected_output": expected,
                }
            )
    random.Random(f"{seed}/order").shuffle(rows)
    return rows


def _json_text(data: Any) -> str:
    return json_text(data)


def _manifest(rows: list[dict[str, Any]], seed: int, per_schema: int, sha256: str) -> dict:
    by_complexity = Counter(row["complexity"] for row in rows)
    schemas = Counter(spec.complexity for spec in ALL_SPECS)
    return {
        "generator": "edgebench.datagen.edgejson",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "examples_per_schema": per_schema,
        "rows": len(rows),
        "schema_types": len(ALL_SPECS),
        "rows_per_complexity": {level: by_complexity[level] for level in COMPLEXITIES},
        "schemas_per_complexity": {level: schemas[level] for level in COMPLEXITIES},
        "rows_per_schema": dict(Counter(row["schema_id"] for row in rows)),
        "files": {DATASET_FILE: {"sha256": sha256}},
    }


def render_files(
    seed: int = DEFAULT_SEED, examples_per_schema: int = DEFAULT_EXAMPLES_PER_SCHEMA
) -> dict[str, str]:
    """Every file of the dataset folder as {relative path: text}."""
    rows = generate_rows(seed, examples_per_schema)
    dataset = jsonl_text(rows)
    sha256 = hashlib.sha256(dataset.encode("utf-8")).hexdigest()
    files = {DATASET_FILE: dataset}
    for spec in ALL_SPECS:
        files[f"schemas/{spec.complexity}/{spec.schema_id}.json"] = _json_text(spec.json_schema())
    files[MANIFEST_FILE] = _json_text(_manifest(rows, seed, examples_per_schema, sha256))
    return files


def _remove_stale_schemas(out_dir: Path, keep: set[str]) -> None:
    # Only in a folder we generated before: never delete files we did not write.
    if not (out_dir / MANIFEST_FILE).is_file():
        return
    for path in (out_dir / "schemas").glob("*/*.json"):
        if path.relative_to(out_dir).as_posix() not in keep:
            path.unlink()


def write_dataset(
    out_dir: Path,
    seed: int = DEFAULT_SEED,
    examples_per_schema: int = DEFAULT_EXAMPLES_PER_SCHEMA,
) -> dict[str, Any]:
    """Write test.jsonl, schemas/ and generation.json into `out_dir`; return the manifest."""
    if examples_per_schema < 1:
        raise UserError(f"--examples-per-schema must be at least 1, got {examples_per_schema}")
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"{out_dir}: exists and is not a folder")
    files = render_files(seed, examples_per_schema)
    _remove_stale_schemas(out_dir, set(files))
    write_text_files(out_dir, files)
    return json.loads(files[MANIFEST_FILE])
