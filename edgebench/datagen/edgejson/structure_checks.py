"""Checks on rows and schemas: ids, schema files, output validity, complexity, derived totals."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import SchemaError, ValidationError, best_match

from edgebench.datagen.edgejson.catalog import SPECS_BY_ID
from edgebench.datagen.edgejson.loader import Dataset, Row, SchemaFile
from edgebench.datagen.edgejson.outcome import CheckResult, Status, outcome, repeated
from edgebench.datagen.edgejson.rules import TOLERANCE, mismatches
from edgebench.datagen.edgejson.shape import BOUNDS, MAX_LEAF_VALUES, count_values


def rows_load(ds: Dataset) -> CheckResult:
    # Unreadable rows stop loading with a UserError, so reaching this check means all loaded.
    return CheckResult("rows load", Status.PASS, f"{len(ds.rows)} rows read from {ds.path}")


def unique_ids(ds: Dataset) -> CheckResult:
    groups = repeated(ds.rows, lambda row: row.id)
    problems = [
        f"id {group[0].id} on lines {', '.join(str(row.line) for row in group)}" for group in groups
    ]
    return outcome("unique ids", problems, f"{len(groups)} ids used more than once")


def _used_schema_ids(ds: Dataset) -> list[str]:
    return sorted({row.schema_id for row in ds.rows})


def _schema_error(found: SchemaFile) -> str | None:
    try:
        Draft7Validator.check_schema(found.schema)
    except SchemaError as exc:
        return f"{found.path}: not a valid Draft-07 schema ({exc.message})"
    return None


def schemas_found(ds: Dataset) -> CheckResult:
    first_line: dict[str, int] = {}
    for row in ds.rows:
        first_line.setdefault(row.schema_id, row.line)
    problems = []
    for schema_id in _used_schema_ids(ds):
        found = ds.schemas.get(schema_id)
        if found is None:
            problems.append(
                f"{schema_id}: no schema file (first used on line {first_line[schema_id]})"
            )
        elif error := _schema_error(found):
            problems.append(error)
    detail = f"{len(first_line)} schema ids used, {len(ds.schemas)} schema files"
    return outcome("every schema_id has a schema", problems, detail)


def _first_errors(
    ds: Dataset, format_checker: FormatChecker | None = None
) -> tuple[int, list[tuple[Row, ValidationError]]]:
    """(rows checked, each failing row with its most telling error).

    Without a format checker `format` stays an annotation, as Draft-07 defines it; with one,
    only the format errors are kept, so the two checks never report the same problem.
    """
    validators = {
        schema_id: Draft7Validator(found.schema, format_checker=format_checker)
        for schema_id, found in ds.schemas.items()
        if _schema_error(found) is None
    }
    checked, failing = 0, []
    for row in ds.rows:
        validator = validators.get(row.schema_id)
        if validator is None:
            continue  # reported by the schema check
        checked += 1
        errors = [
            error
            for error in validator.iter_errors(row.expected)
            if format_checker is None or error.validator == "format"
        ]
        if errors:
            failing.append((row, best_match(errors)))
    return checked, failing


def _error_lines(failing: list[tuple[Row, ValidationError]]) -> list[str]:
    lines = []
    for row, error in failing:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        lines.append(f"{row.id} (line {row.line}): at {where}: {error.message}")
    return lines


def outputs_valid(ds: Dataset) -> CheckResult:
    checked, failing = _first_errors(ds)
    detail = f"{checked - len(failing)} of {checked} outputs valid"
    if checked < len(ds.rows):
        detail += f" ({len(ds.rows) - checked} rows without a usable schema)"
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
    checked, failing = _first_errors(ds, checker)
    detail = f"{checked - len(failing)} of {checked} outputs pass {', '.join(asserted)}"
    if unchecked:
        detail += f"; not checked: {', '.join(unchecked)}"
    return outcome("string formats", _error_lines(failing), detail)


def complexity_bounds(ds: Dataset) -> CheckResult:
    declared: dict[str, set[str]] = defaultdict(set)
    for row in ds.rows:
        if row.complexity:
            declared[row.schema_id].add(row.complexity)
    problems = []
    used = [schema_id for schema_id in _used_schema_ids(ds) if schema_id in ds.schemas]
    for schema_id in used:
        folder = ds.schemas[schema_id].complexity
        if not folder and not declared[schema_id]:
            problems.append(f"{schema_id}: no complexity (no level folder, no complexity field)")
        if folder and declared[schema_id] - {folder}:
            problems.append(f"{schema_id}: rows say {sorted(declared[schema_id])}, folder {folder}")
        for level in sorted({folder} if folder else declared[schema_id]):
            bounds = BOUNDS[level]
            if issues := bounds.problems(ds.schemas[schema_id].schema):
                problems.append(f"{schema_id} ({level}: {bounds.summary}): {', '.join(issues)}")
    schema_problems = len(problems)
    for row in ds.rows:
        if (size := count_values(row.expected)) > MAX_LEAF_VALUES:
            problems.append(f"{row.id} (line {row.line}): {size} values, limit {MAX_LEAF_VALUES}")
    detail = (
        f"{schema_problems} problems in {len(used)} schemas, {len(problems) - schema_problems}"
        f" outputs over {MAX_LEAF_VALUES} values; "
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
