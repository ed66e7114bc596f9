"""Checks on rows and schemas: output validity, string formats, complexity, derived totals.

The reader (tasks/formats/edgejson.py) has already refused what is not readable: bad
JSON, missing fields, duplicate ids, unknown schema ids, invalid schemas."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError, best_match

from edgebench.datagen.edgejson.catalog import SPECS_BY_ID
from edgebench.datagen.edgejson.outcome import CheckResult, Status, outcome
from edgebench.datagen.edgejson.rules import TOLERANCE, mismatches
from edgebench.datagen.edgejson.shape import BOUNDS, MAX_LEAF_VALUES, count_values
from edgebench.scoring.schema import get_checker
from edgebench.tasks.formats.edgejson import EdgeJSONDataset as Dataset
from edgebench.tasks.formats.edgejson import EdgeJSONRow as Row


def rows_load(ds: Dataset) -> CheckResult:
    # The reader refuses unreadable rows, duplicate ids and missing or invalid schemas
    # with a UserError, so reaching this check means all of that holds.
    detail = (
        f"{len(ds.rows)} rows read from {ds.path}, ids unique; {len(ds.schemas)} schema ids "
        f"used, each a valid JSON Schema ({ds.schema_files} schema files)"
    )
    return CheckResult("rows load", Status.PASS, detail)


def _first_errors(ds: Dataset, *, formats: bool = False) -> list[tuple[Row, ValidationError]]:
    """Each failing row with its most telling error, validated as `run` validates
    (`get_checker`: no network, regex keywords in bounded time).

    Without `formats`, `format` stays an annotation, as Draft-07 defines it; with it, only
    the format errors are kept, so the two checks never report the same problem.
    """
    failing = []
    for row in ds.rows:
        found = ds.schemas[row.schema_id]
        checker = get_checker(found.schema, source=str(found.path), check_formats=formats)
        errors = [
            error
            for error in checker.validation_errors(row.expected)
            if not formats or error.validator == "format"
        ]
        if errors:
            failing.append((row, best_match(errors)))
    return failing


def _error_lines(failing: list[tuple[Row, ValidationError]]) -> list[str]:
    lines = []
    for row, error in failing:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        lines.append(f"{row.id} (line {row.line}): at {where}: {error.message}")
    return lines


def outputs_valid(ds: Dataset) -> CheckResult:
    failing = _first_errors(ds)
    detail = f"{len(ds.rows) - len(failing)} of {len(ds.rows)} outputs valid"
    return outcome("expected outputs match schemas", _error_lines(failing), detail)


def _formats(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["format"]} if isinstance(node.get("format"), str) else set()
        return own.union(*(_formats(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_formats(value) for value in node))
    return set()


def formats_valid(ds: Dataset) -> CheckResult:
    checker = Draft7Validator.FORMAT_CHECKER
    used = set().union(*(_formats(found.schema) for found in ds.schemas.values()))
    # A format is only asserted when its checker library is installed (date-time needs one).
    asserted, unchecked = sorted(used & set(checker.checkers)), sorted(used - set(checker.checkers))
    if not asserted:
        return CheckResult("string formats", Status.SKIP, "no assertable format in the schemas")
    failing = _first_errors(ds, formats=True)
    detail = f"{len(ds.rows) - len(failing)} of {len(ds.rows)} outputs pass {', '.join(asserted)}"
    if unchecked:
        detail += f"; not checked: {', '.join(unchecked)}"
    return outcome("string formats", _error_lines(failing), detail)


def complexity_bounds(ds: Dataset) -> CheckResult:
    problems = []
    for schema_id, found in sorted(ds.schemas.items()):
        bounds = BOUNDS.get(found.complexity)
        if bounds is None:
            problems.append(
                f"{schema_id}: folder {found.complexity}/ is not a complexity ({', '.join(BOUNDS)})"
            )
        elif issues := bounds.problems(found.schema):
            problems.append(
                f"{schema_id} ({found.complexity}: {bounds.summary}): {', '.join(issues)}"
            )
    schema_problems = len(problems)
    for row in ds.rows:
        if (size := count_values(row.expected)) > MAX_LEAF_VALUES:
            problems.append(f"{row.id} (line {row.line}): {size} values, limit {MAX_LEAF_VALUES}")
    outputs = len(problems) - schema_problems
    detail = (
        f"{schema_problems} problems in {len(ds.schemas)} schemas, {outputs} outputs over"
        f" {MAX_LEAF_VALUES} values; "
        + "; ".join(f"{level} = {bounds.summary}" for level, bounds in BOUNDS.items())
    )
    return outcome("complexity bounds", problems, detail)


def derived_totals(ds: Dataset) -> CheckResult:
    # Rules apply only where the schema file is exactly the one our generator writes.
    known = {
        schema_id: spec
        for schema_id, spec in SPECS_BY_ID.items()
        if schema_id in ds.schemas and ds.schemas[schema_id].schema == spec.json_schema()
    }
    problems, checked, unknown = [], 0, set()
    for row in ds.rows:
        spec = known.get(row.schema_id)
        if spec is None:
            unknown.add(row.schema_id)
        elif spec.rules and isinstance(row.expected, dict):
            checked += 1
            problems += [
                f"{row.id} (line {row.line}): {m}" for m in mismatches(spec.rules, row.expected)
            ]
    skipped = f"{len(unknown)} schemas with unknown derivation rules not checked" if unknown else ""
    if not checked:
        return CheckResult("derived totals", Status.SKIP, skipped or "no schema has derived fields")
    detail = f"{checked} rows recomputed within ±{TOLERANCE}" + (f"; {skipped}" if skipped else "")
    return outcome("derived totals", problems, detail)
