"""Terminal views of a run: a live progress bar and the end-of-run summary tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from edgebench.report.facts import METRIC_LABELS

# The group an accuracy table breaks results down by, when the run has it.
_PREFERRED_GROUPS = ("by_depth", "by_complexity")
# A second breakdown shown under the first one in the same table (DeepJSONEval's tiers),
# its rows in reading order rather than the summary's alphabetical one.
_SECOND_GROUP = {"by_depth": "by_difficulty"}
_ROW_ORDER = {"by_difficulty": ("medium", "hard")}
# Counts next to the scores in a metrics row, not scores themselves.
COUNT_KEYS = ("n", "n_skipped")
# The score the progress bar shows, by the name a task's scores have it under; else the
# task's first score (round trip: CSA).
_HEADLINE = {"json_exact": "exact", "key_matching": "km"}


def _header(name: str) -> str:
    return METRIC_LABELS.get(name, name)


def table_group(summary: dict[str, Any]) -> str | None:
    groups = [k for k in summary if k.startswith("by_") and k != "by_constraint"]
    preferred = [g for g in _PREFERRED_GROUPS if g in groups]
    return (preferred or groups or [None])[0]


class RichProgress:
    """Progress bar with ETA and running accuracy and speed."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task_id: Any = None
        self._n = 0
        self._total = 0.0
        self._label = "exact"
        self._decode: list[float] = []

    def start(self, total: int, description: str) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._progress.start()
        self._task_id = self._progress.add_task(description, total=total, stats="")

    def advance(self, sample: dict[str, Any]) -> None:
        scores = sample.get("scores")
        if scores is not None:  # None: skipped (too long for the context), not scored
            self._n += 1
            key = next((k for k in _HEADLINE if k in scores), next(iter(scores), None))
            if key is not None:
                self._label = _HEADLINE.get(key, key)
                self._total += float(scores[key])
        rate = (sample.get("timings") or {}).get("decode_tok_s")
        if rate:
            self._decode.append(rate)
        stats = f"{self._label} {self._total / self._n:.2f}" if self._n else ""
        if self._decode:
            stats += f" · {sum(self._decode) / len(self._decode):.0f} tok/s"
        assert self._progress is not None
        self._progress.update(self._task_id, advance=1, stats=stats)

    def note(self, message: str) -> None:
        """A line above the bar: a worker that crashed, an example that timed out."""
        self.console.print(f"[yellow]{escape(message)}[/]", highlight=False, soft_wrap=True)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _group_table(
    title: str,
    names: list[str],
    rows: dict[str, dict[str, Any]],
    overall: dict[str, Any] | None,
    group: str | None,
    more_rows: dict[str, dict[str, Any]] | None = None,
) -> Table:
    """One row per group value (then, in a section of their own, `more_rows`) and a bold
    overall row (when given), one column per figure."""
    table = Table(title=title, title_justify="left")
    table.add_column(group.removeprefix("by_") if group else "")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(_header(name), justify="right")
    for section in (rows, more_rows or {}):
        for position, (value, scores) in enumerate(section.items()):
            cells = (_fmt(scores.get(m)) for m in names)
            last = position == len(section) - 1
            table.add_row(value, str(scores["n"]), *cells, end_section=last)
    if overall is None:
        return table
    table.add_row(
        "[bold]overall",
        f"[bold]{overall['n']}",
        *(f"[bold]{_fmt(overall.get(m))}" for m in names),
        end_section=True,
    )
    return table


def accuracy_table(summary: dict[str, Any], group: str | None = None) -> Table:
    """The task's own scores (EdgeJSON: JSONExact, F1, ...; roundtrip: CSA, NTED, ...)."""
    group = group or table_group(summary)
    title = (
        f"{summary.get('model')} · {summary.get('task')} · {summary.get('n_examples')} examples"
        f" · constraint {summary.get('primary_constraint', 'none')}"
    )
    overall = summary["metrics"]
    names = [k for k in overall if k not in COUNT_KEYS]
    rows = summary.get(group) or {} if group else {}
    second_group = _SECOND_GROUP.get(group or "", "")
    second = _in_order(summary.get(second_group) or {}, _ROW_ORDER.get(second_group, ()))
    table = _group_table(title, names, rows, overall, group, second)
    if summary.get("n_skipped"):
        table.caption = (
            f"{summary['n_skipped']} examples skipped, not scored: their prompt does not fit "
            "the context limit (reasons in samples.jsonl)"
        )
    return table


def _in_order(rows: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """`rows` with the values named in `order` first, in that order, then the others."""
    rank = {value: position for position, value in enumerate(order)}
    return dict(sorted(rows.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def element_type_table(summary: dict[str, Any]) -> Table:
    """Key-matching per leaf element type, pooled over fields."""
    table = Table(title="key matching by leaf element type", title_justify="left")
    for column in ("element type", "examples", "fields", "Key match"):
        table.add_column(column, justify="left" if column == "element type" else "right")
    for kind, row in summary["by_element_type"].items():
        table.add_row(kind, str(row["n"]), str(row["fields"]), _fmt(row["key_matching"]))
    return table


def family_tables(summary: dict[str, Any]) -> list[Table]:
    """One table per metric family other than the task's own (`--metrics`): by group
    (complexity, depth) for one constraint mode, one row per mode for several."""
    tables = []
    modes = summary.get("by_constraint") or {}
    for name, result in (summary.get("families") or {}).items():
        if result.get("role") == "task":
            continue
        names = list(result.get("higher_is_better") or {})
        title = f"metric family {name}"
        if len(modes) > 1:
            rows = {
                mode: mode_summary["families"][name]["overall"]
                for mode, mode_summary in modes.items()
                if name in (mode_summary.get("families") or {})
            }
            tables.append(_group_table(title, names, rows, None, "by_constraint"))
            continue
        group = table_group(result)
        rows = result.get(group) or {} if group else {}
        tables.append(_group_table(title, names, rows, result["overall"], group))
    return tables


def perf_table(summary: dict[str, Any]) -> Table:
    perf = summary["perf"]
    table = Table(title="performance", title_justify="left")
    table.add_column("measure")
    for column in ("p50", "p95", "mean"):
        table.add_column(column, justify="right")
    rows = (
        ("TTFT (s)", "ttft_s"),
        ("latency (s)", "latency_s"),
        ("prefill tok/s", "prefill_tok_s"),
        ("decode tok/s", "decode_tok_s"),
    )
    for label, key in rows:
        dist = perf.get(key) or {}
        digits = 3 if key.endswith("_s") and "tok" not in key else 1
        table.add_row(label, *(_fmt(dist.get(c), digits) for c in ("p50", "p95", "mean")))
    return table


def totals_line(summary: dict[str, Any]) -> str:
    perf = summary["perf"]
    parts = [
        f"load {_fmt(perf.get('load_s'), 2)} s",
        f"peak RSS {_fmt(perf.get('peak_rss_mb'), 0)} MB",
        f"(anon {_fmt(perf.get('peak_rss_anon_mb'), 0)}, "
        f"file {_fmt(perf.get('peak_rss_file_mb'), 0)})",
        f"tokens in/out {perf.get('prompt_tokens_total')}/{perf.get('output_tokens_total')}",
        f"hit max_tokens {perf.get('hit_token_limit', 0)}",
        f"wall {_fmt(perf.get('wall_s'), 1)} s",
    ]
    return " · ".join(parts)


def render_summary(summary: dict[str, Any]) -> Group:
    """Accuracy and speed of the run; with several models or constraint modes, the first
    one's detail and then all of them side by side."""
    parts: list[Any] = [
        accuracy_table(summary),
        *([element_type_table(summary)] if summary.get("by_element_type") else []),
        *family_tables(summary),
        perf_table(summary),
        totals_line(summary),
    ]
    several_models = len(summary.get("models") or []) > 1
    if several_models or len(summary.get("by_constraint") or {}) > 1:
        from edgebench.report.compare import compare_table

        parts.append(compare_table([summary]))
    return Group(*parts)


def consistency_table(summary: dict[str, Any]) -> Table:
    """One row per temperature: how much the N answers to each prompt agree (mean over
    prompts), next to the task's own accuracy of all generations."""
    seeds = summary.get("seeds") or []
    title = (
        f"{summary.get('model')} · {summary.get('task')} · consistency over "
        f"{summary.get('samples_per_prompt')} samples per prompt"
        + (f" (seeds {seeds[0]}-{seeds[-1]})" if seeds else "")
    )
    rows = summary.get("by_temperature") or {}
    # Valid JSON and the task's headline score (JSONExact, CSA, ...) of all generations.
    known = next((list(r["task_metrics"]) for r in rows.values()), [])
    headline = [n for n in known if n not in ("n", "valid_json")][:1]
    task_names = (["valid_json"] if "valid_json" in known else []) + headline
    table = Table(title=title, title_justify="left")
    columns = ["temperature", "prompts", *map(_header, task_names)]
    columns += ["STED mean", "STED std", "consistency", "structural", "semantic"]
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index == 0 else "right")
    for key, row in rows.items():
        metrics = row.get("task_metrics") or {}
        table.add_row(
            key,
            str(row.get("n_prompts")),
            *(_fmt(metrics.get(n)) for n in task_names),
            _fmt(row.get("sted_mean")),
            _fmt(row.get("sted_std")),
            _fmt(row.get("consistency")),
            _fmt(row.get("consistency_structural")),
            _fmt(row.get("consistency_semantic")),
        )
    return table


def render_consistency(summary: dict[str, Any]) -> Group:
    return Group(consistency_table(summary), perf_table(summary), totals_line(summary))
