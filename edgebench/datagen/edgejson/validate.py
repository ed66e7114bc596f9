"""All dataset checks in the order the validate command shows them, then the size rules
of the built-in set, which bind only that set."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from edgebench.datagen.edgejson import structure_checks, text_checks
from edgebench.datagen.edgejson.outcome import CheckResult, outcome, size_rule
from edgebench.datagen.edgejson.spec import COMPLEXITIES
from edgebench.tasks.formats.edgejson import EdgeJSONDataset as Dataset

MIN_ROWS = 150
MIN_SCHEMA_TYPES = 24


def _per_level(counts: Counter[str]) -> str:
    others = sorted(set(counts) - set(COMPLEXITIES))  # folders named otherwise
    return ", ".join(f"{level} {counts[level]}" for level in (*COMPLEXITIES, *others))


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
    structure_checks.outputs_valid,
    structure_checks.formats_valid,
    text_checks.duplicate_prompts,
    structure_checks.complexity_bounds,
    structure_checks.derived_totals,
    text_checks.prose_prompts,
    text_checks.values_in_prompt,
    text_checks.prompt_length,
)
SIZE_RULES: tuple[Callable[[Dataset], CheckResult], ...] = (dataset_size, schema_types)


def run_checks(ds: Dataset, *, builtin: bool) -> list[CheckResult]:
    """Every check; the size rules assert only with `builtin` (the built-in set)."""
    return [check(ds) for check in CHECKS] + [
        size_rule(rule(ds), builtin=builtin) for rule in SIZE_RULES
    ]
