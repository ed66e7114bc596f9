"""`edgebench compare`: constraint modes (and runs) side by side, from run folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from edgebench.report.rundata import dig, load_run

# (header, how to read it from one constraint's summary, digits)
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("valid", "metrics.valid_json", 3),
    ("schema", "metrics.schema_compliance", 3),
    ("exact", "metrics.json_exact", 3),
    ("F1", "metrics.field_f1", 3),
    ("TTFT s", "perf.ttft_s.p50", 2),
    ("tok/s", "perf.decode_tok_s.p50", 1),
    ("×none", "decode_ratio_to_none", 2),
    ("lat s", "perf.latency_s.p50", 2),
    ("compile ms", "compile.first_s.p50", 2),
    ("cached ms", "compile.cached_s.p50", 3),
    ("limit", "perf.hit_token_limit", 0),
    ("unsup", "n_unsupported", 0),
    ("RSS MB", "perf.peak_rss_mb", 0),
)
_MILLISECONDS = {"compile.first_s.p50", "compile.cached_s.p50"}
# DeepJSONEval runs show their own scores in place of EdgeJSON's four.
DEEPJSON_ACCURACY: tuple[tuple[str, str, int], ...] = (
    ("valid", "metrics.valid_json", 3),
    ("syntax", "metrics.syntax", 3),
    ("km", "metrics.key_matching", 3),
    ("strict", "metrics.strict", 3),
)


def columns_for(summaries: list[dict[str, Any]]) -> tuple[tuple[str, str, int], ...]:
    """The table's columns: DeepJSONEval's scores when every run has them."""
    if summaries and all("key_matching" in (s.get("metrics") or {}) for s in summaries):
        return DEEPJSON_ACCURACY + COLUMNS[4:]
    return COLUMNS


def load_run_summary(run_dir: Path) -> dict[str, Any]:
    """A run folder's summary, derived again from manifest.json and samples.jsonl so a
    crashed or older run compares on the same definitions."""
    return load_run(run_dir).summary


def _cell(value: Any, path: str, digits: int) -> str:
    if value is None:
        return "-"
    if path in _MILLISECONDS:
        value = value * 1000
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def compare_rows(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (run, constraint mode), values as numbers (for tables and JSON)."""
    columns = columns_for(summaries)
    rows = []
    for summary in summaries:
        for mode, result in (summary.get("by_constraint") or {}).items():
            row = {
                "run": summary.get("run_id"),
                "model": summary.get("model"),
                "constraint": mode,
                "n": result.get("n_examples"),
            }
            row.update({path: dig(result, path) for _, path, _ in columns})
            rows.append(row)
    return rows


def compare_table(summaries: list[dict[str, Any]]) -> Table:
    """Values are p50 over examples; the run (and model) columns appear when more than
    one run is compared."""
    several_runs = len(summaries) > 1
    title = "constraint modes side by side"
    if not several_runs and summaries:
        title += f" · {summaries[0].get('model')} · {summaries[0].get('run_id')}"
    table = Table(title=title, title_justify="left")
    if several_runs:
        table.add_column("run")
        table.add_column("model")
    table.add_column("constraint")
    table.add_column("n", justify="right")
    columns = columns_for(summaries)
    for header, _, _ in columns:
        table.add_column(header, justify="right")
    for row in compare_rows(summaries):
        cells = [row["constraint"], str(row["n"])]
        cells += [_cell(row[path], path, digits) for _, path, digits in columns]
        prefix = [row["run"] or "-", row["model"] or "-"] if several_runs else []
        table.add_row(*prefix, *cells)
    table.caption = (
        "p50 over examples. tok/s: decode tokens/s; ×none: its ratio to `none` in the same "
        "run. compile: first compile per distinct schema; cached: the same schema again. "
        "limit: answers cut at max_tokens. unsup: examples whose schema the engine refused."
    )
    return table
