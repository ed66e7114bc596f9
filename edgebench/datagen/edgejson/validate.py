"""All dataset checks in the order the validate command shows them, plus the size checks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from edgebench.datagen.edgejson import structure_checks, text_checks
from edgebench.datagen.edgejson.loader import Dataset
from edgebench.datagen.edgejson.outcome import CheckResult, outcome
from edgebench.datagen.edgejson.spec import COMPLEXITIES

MIN_ROWS = 150
MIN_SCHEMA_TYPES = 24


def _per_level(counts: Counter[str | None]) -> str:
    parts = [f"{level} {counts[level]}" for level in COMPLEXITIES]
    if counts[None]:
        parts.append(f"unknown {counts[None]}")
    return ", ".join(parts)


def dataset_size(ds: Dataset) -> CheckResult:
    counts = Counter(ds.complexity_of(row) for row in ds.rows)
    problems = [f"{len(ds.rows)} rows, need {MIN_ROWS}"] if len(ds.rows) < MIN_ROWS else []
    return outcome(
        f"at least {MIN_ROWS} rows", problems, f"{len(ds.rows)} rows: {_per_level(counts)}"
    )


def schema_types(ds: Dataset) -> CheckResult:
    levels = {row.schema_id: ds.complexity_of(row) for row in ds.rows}
    counts = Counter(levels.values())
    problems = (
        [f"{len(levels)} schema types, need {MIN_SCHEMA_TYPES}"]
        if len(levels) < MIN_SCHEMA_TYPES
        else []
    )
    detail = f"{len(levels)} schema types: {_per_level(counts)}"
    return outcome(f"at least {MIN_SCHEMA_TYPES} schema types", problems, detail)


CHECKS: tuple[Callable[[Dataset], CheckResult], ...] = (
    structure_checks.rows_load,
    structure_checks.unique_ids,
    structure_checks.schemas_found,
    structure_checks.outputs_valid,
    structure_checks.formats_valid,
    text_checks.duplicate_prompts,
    structure_checks.complexity_bounds,
    structure_checks.derived_totals,
    text_checks.prose_prompts,
    text_checks.values_in_prompt,
    text_checks.prompt_length,
    dataset_size,
    schema_types,
)


def run_checks(ds: Dataset) -> list[CheckResult]:
    return [check(ds) for check in CHECKS]
