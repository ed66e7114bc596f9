"""Schema-engine coverage side by side (JSONSchemaBench): one row per (run, arm, group
value) with the schemas compiled, refused and crashed, compile times, and the task's
validity and compliance over all rows and over the compiled ones."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from edgebench.report.facts import NO_VALUE
from edgebench.runfolder.records import ArmSummary, Coverage, Summary

# The group coverage is broken down by when the run has it; else the first one.
PREFERRED_GROUP = "subset"
OVERALL = "overall"


def coverage_group(arm: ArmSummary) -> str | None:
    groups = arm.coverage.groups if arm.coverage else {}
    return PREFERRED_GROUP if PREFERRED_GROUP in groups else next(iter(groups), None)


def _ms(seconds: float | None) -> float | None:
    return seconds * 1000 if seconds is not None else None


def _row(
    run_id: str, arm: ArmSummary, value: str, cov: Coverage, task: dict[str, Any]
) -> dict[str, Any]:
    score = arm.coverage.score if arm.coverage else None
    return {
        "run": run_id,
        "model": arm.model,
        "constraint": arm.constraint,
        "group": value,
        "n": cov.n,
        "compiled": cov.compiled,
        "refused": cov.refused,
        "crashed": cov.crashed,
        "lost": cov.lost,
        "compile_ms_p50": _ms(cov.compile_s.p50),
        "compile_ms_p95": _ms(cov.compile_s.p95),
        "valid_json": task.get("valid_json"),
        "schema_score": score,  # the task's schema score (schema_compliance, syntax ...)
        "schema_compliance": task.get(score) if score else None,
        "compliant_when_compiled": cov.compliant_when_compiled,
        "refusals": cov.refusals,
    }


def arm_coverage_rows(run_id: str, arm: ArmSummary) -> list[dict[str, Any]]:
    """A row per value of the arm's group, then the overall row; none without a schema
    engine. `valid_json` and `schema_compliance` are the task's figures over all the rows
    of that value (a refused schema scores 0); `compliant_when_compiled` over compiled ones."""
    if arm.coverage is None:
        return []
    group = coverage_group(arm) or ""
    task_groups = arm.groups.get(group, {})
    rows = [
        _row(run_id, arm, value, cov, task_groups.get(value, {}))
        for value, cov in (arm.coverage.groups.get(group) or {}).items()
    ]
    return [*rows, _row(run_id, arm, OVERALL, arm.coverage.overall, arm.metrics)]


def coverage_rows(summaries: list[Summary]) -> list[dict[str, Any]]:
    """`arm_coverage_rows` of every arm of every run."""
    return [
        row
        for summary in summaries
        for arm in summary.arms
        for row in arm_coverage_rows(summary.run_id, arm)
    ]


def _cell(value: Any, digits: int = 3) -> str:
    if value is None:
        return NO_VALUE
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


COLUMNS = (
    ("n", "n", 0),
    ("compiled", "compiled", 0),
    ("refused", "refused", 0),
    ("crashed", "crashed", 0),
    ("compile ms p50", "compile_ms_p50", 1),
    ("p95", "compile_ms_p95", 1),
    ("valid", "valid_json", 3),
    ("schema", "schema_compliance", 3),
    ("schema|compiled", "compliant_when_compiled", 3),
)


def coverage_table(summaries: list[Summary]) -> Table | None:
    """The coverage rows as a table; None when no arm has a schema engine."""
    rows = coverage_rows(summaries)
    if not rows:
        return None
    several_runs = len(summaries) > 1
    table = Table(title="schema engine coverage", title_justify="left")
    if several_runs:
        table.add_column("run")
    table.add_column("arm", no_wrap=True)
    table.add_column("group", no_wrap=True)
    for header, _, _ in COLUMNS:
        table.add_column(header, justify="right")
    for row in rows:
        last = row["group"] == OVERALL
        style = "[bold]" if last else ""
        cells = [f"{style}{_cell(row[key], digits)}" for _, key, digits in COLUMNS]
        arm = escape(f"{row['model']} | {row['constraint']}")
        prefix = [escape(row["run"])] if several_runs else []
        table.add_row(*prefix, arm, f"{style}{escape(row['group'])}", *cells, end_section=last)
    table.caption = (
        "compiled / refused / crashed: examples whose schema the engine compiled, refused, "
        "or crashed on (raised, killed the worker or past --compile-timeout). compile ms: "
        "first compile per distinct schema that compiled. valid, schema: the task's valid "
        "JSON and schema score (schema compliance; DeepJSONEval: syntax) over all rows (a "
        "refused schema scores 0); schema|compiled: over the compiled rows only. "
        "Refusal reasons: summary.json, arms[].coverage."
    )
    return table
