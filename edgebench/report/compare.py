"""`edgebench compare`: models, runtimes and constraint modes side by side, from run
folders: one row per (run, model, constraint mode)."""

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
    ("load s", "perf.load_s", 2),
    ("size MB", "model_size_mb", 1),
)
# Shown when a table has several models: decode tok/s over the first model's, same mode.
MODEL_RATIO = ("×1st", "decode_ratio_to_first_model", 2)
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


def _per_model(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """label -> {mode: result}; summaries written before multi-model runs have only
    `by_constraint`, for their one model."""
    by_model = summary.get("by_model")
    if by_model:
        return {label: m.get("by_constraint") or {} for label, m in by_model.items()}
    return {str(summary.get("model")): summary.get("by_constraint") or {}}


def compare_rows(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (run, model, constraint mode), values as numbers (for tables and
    JSON). A skipped mode has n = 0, no figures and its reason under `skipped`."""
    columns = columns_for(summaries)
    rows = []
    for summary in summaries:
        for label, per_mode in _per_model(summary).items():
            for mode, result in per_mode.items():
                row = {
                    "run": summary.get("run_id"),
                    "model": label,
                    "constraint": mode,
                    "n": result.get("n_examples"),
                    "skipped": result.get("skip_reason"),
                }
                paths = [path for _, path, _ in (*columns, MODEL_RATIO)]
                row.update({p: None if row["skipped"] else dig(result, p) for p in paths})
                rows.append(row)
    return rows


def compare_table(summaries: list[dict[str, Any]]) -> Table:
    """Values are p50 over examples; the run column appears when more than one run is
    compared, the model column (and ×1st) when a table holds more than one model."""
    rows = compare_rows(summaries)
    several_runs = len(summaries) > 1
    several_models = len({row["model"] for row in rows}) > 1
    title = (
        "models and constraint modes side by side"
        if several_models
        else ("constraint modes side by side")
    )
    if not several_runs and summaries:
        if not several_models:
            title += f" · {summaries[0].get('model')}"
        title += f" · {summaries[0].get('run_id')}"
    base = list(columns_for(summaries))
    columns = [*base, MODEL_RATIO] if several_models else base
    table = Table(title=title, title_justify="left")
    if several_runs:
        table.add_column("run")
    if several_runs or several_models:
        # Model names are what the table is about: never cut them.
        width = max((len(str(row["model"])) for row in rows), default=5)
        table.add_column("model", no_wrap=True, min_width=width)
    table.add_column("constraint", no_wrap=True)
    table.add_column("n", justify="right")
    for header, _, _ in columns:
        table.add_column(header, justify="right")
    skipped = []
    for row in rows:
        cells = [row["constraint"], "skip" if row["skipped"] else str(row["n"])]
        cells += [_cell(row[path], path, digits) for _, path, digits in columns]
        prefix = [row["run"] or "-"] if several_runs else []
        if several_runs or several_models:
            prefix.append(row["model"] or "-")
        table.add_row(*prefix, *cells)
        if row["skipped"]:
            skipped.append(f"{row['model']} · {row['constraint']}: {row['skipped']}")
    caption = (
        "p50 over examples. tok/s: decode tokens/s; ×none: its ratio to `none` in the same "
        "run. compile: first compile per distinct schema; cached: the same schema again. "
        "limit: answers cut at max_tokens. unsup: examples whose schema the engine refused. "
        "load s: model load; size MB: model file(s) on disk. n = skip: a mode the model's "
        "runtime cannot apply."
    )
    if several_models:
        caption += " ×1st: decode tok/s over the first model's, same mode, same run."
    table.caption = "\n".join([caption, *(f"skipped: {s}" for s in skipped)])
    return table
