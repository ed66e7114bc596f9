"""Terminal views of a run: a live progress bar and the end-of-run summary tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
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
from edgebench.runner.summary import ACCURACY_METRICS


class RichProgress:
    """Progress bar with ETA and running accuracy and speed."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task_id: Any = None
        self._n = 0
        self._exact = 0.0
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
        self._n += 1
        self._exact += float((sample.get("scores") or {}).get("json_exact", 0))
        rate = (sample.get("timings") or {}).get("decode_tok_s")
        if rate:
            self._decode.append(rate)
        stats = f"exact {self._exact / self._n:.2f}"
        if self._decode:
            stats += f" · {sum(self._decode) / len(self._decode):.0f} tok/s"
        assert self._progress is not None
        self._progress.update(self._task_id, advance=1, stats=stats)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def accuracy_table(summary: dict[str, Any], group: str = "by_complexity") -> Table:
    title = (
        f"{summary.get('model')} · {summary.get('task')} · {summary.get('n_examples')} examples"
        f" · constraint {summary.get('primary_constraint', 'none')}"
    )
    table = Table(title=title, title_justify="left")
    table.add_column(group.removeprefix("by_"))
    table.add_column("n", justify="right")
    for metric in ACCURACY_METRICS:
        table.add_column(METRIC_LABELS[metric], justify="right")
    for name, scores in (summary.get(group) or {}).items():
        table.add_row(name, str(scores["n"]), *(_fmt(scores[m]) for m in ACCURACY_METRICS))
    overall = summary["metrics"]
    table.add_row(
        "[bold]overall",
        f"[bold]{overall['n']}",
        *(f"[bold]{_fmt(overall[m])}" for m in ACCURACY_METRICS),
        end_section=True,
    )
    return table


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
    parts: list[Any] = [accuracy_table(summary), perf_table(summary), totals_line(summary)]
    several_models = len(summary.get("models") or []) > 1
    if several_models or len(summary.get("by_constraint") or {}) > 1:
        from edgebench.report.compare import compare_table

        parts.append(compare_table([summary]))
    return Group(*parts)
