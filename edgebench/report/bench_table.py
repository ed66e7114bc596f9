"""Terminal view of `edgebench bench`: llama-bench's columns, plus spread and contention."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from edgebench.report.facts import runtime_label

# A row whose repetitions spread more than this (std / mean), or during which other
# processes took more than this share of the CPU, is flagged as not clean.
NOISY_CV = 0.05
BUSY_SHARE = 0.05


def flags(row: dict[str, Any]) -> list[str]:
    """Why a row's figure is not clean, in words (empty when it is)."""
    reasons = []
    cv, busy = row.get("tok_s_cv"), row.get("cpu_others_max")
    if cv is not None and cv > NOISY_CV:
        reasons.append(f"spread {100 * cv:.1f}% of the mean")
    if busy is not None and busy > BUSY_SHARE:
        reasons.append(f"other processes took up to {100 * busy:.0f}% of the CPU")
    return reasons


def _size(size_bytes: int | None) -> str:
    return "-" if not size_bytes else f"{size_bytes / 2**20:.2f} MiB"


def _params(count: int | None) -> str:
    if not count:
        return "-"
    return f"{count / 1e9:.2f} B" if count >= 1e9 else f"{count / 1e6:.2f} M"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def device_line(report: dict[str, Any]) -> str:
    device = report.get("device") or {}
    runtime = device.get("runtime") or {}
    parts = [
        device.get("board_model"),
        device.get("cpu_model"),
        f"{device.get('logical_cores')} cores" if device.get("logical_cores") else None,
        f"{device.get('ram_total_mb')} MB RAM" if device.get("ram_total_mb") else None,
        device.get("os"),
        runtime_label(runtime),
    ]
    return " · ".join(str(p) for p in parts if p)


def weights_size(report: dict[str, Any]) -> tuple[int | None, str]:
    """The size llama-bench shows (llama.cpp's tensor bytes, from the worker's load),
    else the model file's size; and what it is, for the caption."""
    for worker in report.get("workers") or []:
        size = (worker.get("runtime") or {}).get("model_size_bytes")
        if size:
            return int(size), "the weights as llama.cpp counts them, as llama-bench shows"
    return (report.get("model") or {}).get("size_bytes"), "the model file"


def bench_table(report: dict[str, Any]) -> Table:
    model = report.get("model") or {}
    settings = report.get("settings") or {}
    runtime = (report.get("device") or {}).get("runtime") or {}
    backend = f"{runtime.get('name') or model.get('backend') or '?'} CPU"
    size_bytes, size_source = weights_size(report)
    size = _size(size_bytes)
    table = Table(
        title=escape(f"edgebench bench · {device_line(report)}"),
        title_justify="left",
        caption=(
            f"size: {size_source}; "
            f"t/s: mean ± std over {settings.get('repetitions')} repetitions after "
            f"{settings.get('warmup')} warm-up, KV cache cleared each time; ±%: std/mean; "
            "others: the most CPU other processes took during one repetition; "
            "RSS: peak of the worker process"
        ),
        caption_justify="left",
    )
    for header, justify in (
        ("model", "left"),
        ("size", "right"),
        ("params", "right"),
        ("backend", "left"),
        ("threads", "right"),
        ("test", "right"),
        ("t/s", "right"),
        ("±%", "right"),
        ("others", "right"),
        ("RSS MB", "right"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for row in report.get("results") or []:
        mean, std = row.get("tok_s_mean"), row.get("tok_s_std")
        rate = "-" if mean is None else f"{mean:.2f}" + (f" ± {std:.2f}" if std is not None else "")
        style = "yellow" if flags(row) else None
        table.add_row(
            escape(str(model.get("label"))),
            size,
            _params(model.get("parameters")),
            backend,
            str(row["threads"]),
            row["test"],
            rate,
            _percent(row.get("tok_s_cv")),
            _percent(row.get("cpu_others_max")),
            f"{row['peak_rss_mb']:.0f}" if row.get("peak_rss_mb") else "-",
            style=style,
        )
    return table


def bench_notes(report: dict[str, Any]) -> list[str]:
    """One line per row that is not clean, saying why."""
    notes = []
    for row in report.get("results") or []:
        reasons = flags(row)
        if reasons:
            notes.append(f"{row['test']} (threads {row['threads']}): " + "; ".join(reasons))
    return notes


class BenchRichProgress:
    """One bar per thread count: which test and repetition runs, and its speed so far."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task: Any = None

    def start(self, total: int, description: str) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[label]}"),
            TimeElapsedColumn(),
            console=self.console,
        )
        self._progress.start()
        self._task = self._progress.add_task(description, total=total, label="")

    def advance(self, label: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1, label=label)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
