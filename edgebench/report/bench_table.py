"""Views of `edgebench bench`: the terminal table (llama-bench's columns, plus
quantization, spread and contention; a `--duration` bench adds its first minute, last
minute and drop), and llama-bench's `-o md|csv|json`."""

from __future__ import annotations

import csv
import io
from dataclasses import fields, replace
from typing import Any

from rich.markup import escape
from rich.table import Table

from edgebench.io import json_text
from edgebench.report.facts import runtime_label
from edgebench.runfolder.records import BenchModel, BenchRecord, BenchRow
from edgebench.runtimes import label_of
from edgebench.system.cpu_share import CONTENDED_SHARE

# A row whose repetitions spread more than this (std / mean), or during which other
# processes took more than CONTENDED_SHARE of the CPU (the threshold `run` flags
# contended examples by), is flagged as not clean.
NOISY_CV = 0.05
BUSY_SHARE = CONTENDED_SHARE


def flags(row: BenchRow) -> list[str]:
    """Why a row's figure is not clean, in words (empty when it is)."""
    reasons = []
    cv, busy = row.tok_s_cv, row.cpu_others_max
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


def device_line(report: BenchRecord) -> str:
    device = report.device
    parts = [
        device.board_model,
        device.cpu_model,
        f"{device.logical_cores} cores" if device.logical_cores else None,
        f"{device.ram_total_mb} MB RAM" if device.ram_total_mb else None,
        device.os,
        runtime_label(device.runtime or {}),
    ]
    return " · ".join(str(p) for p in parts if p)


def _models(report: BenchRecord) -> dict[str | None, BenchModel]:
    """label -> model block; a format-1 file has its one model under `model`."""
    models = report.models or ([report.model] if report.model is not None else [])
    return {m.label: m for m in models}


def speed_rows(report: BenchRecord) -> list[BenchRow]:
    """The report's rows, each complete on its own: a format-1 file's rows get its one
    model's facts, and every row the device in one line."""
    models = _models(report)
    first = next(iter(models.values()), None)
    device = device_line(report) or None
    rows = []
    for row in report.results:
        model = models.get(row.model, first)
        rows.append(
            replace(
                row,
                model=row.model or (model.label if model else None),
                quantization=row.quantization or (model.quantization if model else None),
                backend=row.backend or (model.backend if model else None),
                size_bytes=row.size_bytes or weights_size(report),
                parameters=row.parameters or (model.parameters if model else None),
                device=row.device or device,
            )
        )
    return rows


def weights_size(report: BenchRecord) -> int | None:
    """A format-1 file's size (its rows have none) as llama-bench shows it: llama.cpp's
    tensor bytes from the worker's load, else the model file's size."""
    for worker in report.workers:
        runtime = worker.runtime or {}  # the runtime's own facts, as it reports them
        size = runtime.get("model_size_bytes")
        if size:
            return int(size)
    return report.model.size_bytes if report.model is not None else None


def rate_text(row: BenchRow) -> str:
    mean, std = row.tok_s_mean, row.tok_s_std
    return "-" if mean is None else f"{mean:.2f}" + (f" ± {std:.2f}" if std is not None else "")


def rss_text(row: BenchRow) -> str:
    return f"{row.peak_rss_mb:.0f}" if row.peak_rss_mb else "-"


# A `--duration` bench's columns (bench/sustained.py), after t/s.
SUSTAINED_HEADERS = ("1st min t/s", "last min t/s", "drop")


def is_sustained(rows: list[BenchRow]) -> bool:
    """Rows of a `--duration` bench (they have a span)."""
    return any(row.span_s is not None for row in rows)


def _speed(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def drop_text(row: BenchRow) -> str:
    """The drop in %, saying when the two minutes overlap or are one window."""
    span, drop, overlap = row.span_s, row.drop_pct, row.overlap_s or 0
    if span is None:
        return "-"
    if drop is None:
        return f"- (ran {span:.0f} s: one window)"
    return f"{drop:.1f}%" + (f" (overlap {overlap:.0f} s)" if overlap > 0 else "")


def sustained_cells(row: BenchRow) -> tuple[str, ...]:
    """A row's cells under SUSTAINED_HEADERS."""
    return (_speed(row.first_minute_tok_s), _speed(row.last_minute_tok_s), drop_text(row))


SUSTAINED_NOTE = (
    "1st/last min: mean t/s of the repetitions whose midpoint falls in the row's first "
    "and last minute; drop: (first - last) / first, positive when it slowed down (under "
    "two minutes the minutes overlap; under one there is one window and no drop)"
)


# llama-bench's columns (quant added), then edgebench's own
HEADERS = (
    "model", "quant", "size", "params", "backend", "threads", "test", "t/s", "±%", "others",
    "RSS MiB",
)  # fmt: skip
_LEFT = {"model", "quant", "backend"}


def headers(rows: list[BenchRow]) -> tuple[str, ...]:
    """HEADERS, with a `--duration` bench's columns after t/s."""
    if not is_sustained(rows):
        return HEADERS
    at = HEADERS.index("t/s") + 1
    return HEADERS[:at] + SUSTAINED_HEADERS + HEADERS[at:]


def _cells(row: BenchRow, sustained: bool = False) -> tuple[str, ...]:
    """A row's cells under `headers` (`sustained`: a `--duration` bench's)."""
    cells = _plain_cells(row)
    if not sustained:
        return cells
    at = HEADERS.index("t/s") + 1
    return cells[:at] + sustained_cells(row) + cells[at:]


def _plain_cells(row: BenchRow) -> tuple[str, ...]:
    return (
        str(row.model),
        row.quantization or "-",
        _size(row.size_bytes),
        _params(row.parameters),
        f"{row.backend or '?'} CPU",
        str(row.threads),
        row.test,
        rate_text(row),
        _percent(row.tok_s_cv),
        _percent(row.cpu_others_max),
        rss_text(row),
    )


def repetitions_text(settings: dict[str, Any]) -> str:
    """ "5 repetitions after 1 warm-up", or a `--duration` bench's "the repetitions of
    600 s ..."; with the pause between them (`--cooldown`) when there was one.
    `settings`: `BenchRecord.settings`, the options as the bench recorded them."""
    duration, cooldown = settings.get("duration_s"), settings.get("cooldown_s")
    reps = (
        f"the repetitions of {duration:g} s"
        if duration
        else f"{settings.get('repetitions')} repetitions"
    )
    pause = f", {cooldown:g} s pause before each (not timed)" if cooldown else ""
    return f"{reps} after {settings.get('warmup')} warm-up{pause}"


def timing_note(settings: dict[str, Any]) -> str:
    """For each runtime whose rows the bench did not time with its own clock
    (`settings.timing`, absent in older files): "; OpenVINO GenAI rows: how"."""
    timing = settings.get("timing") or {}
    return "".join(f"; {label_of(runtime)} rows: {how}" for runtime, how in timing.items())


def caption(report: BenchRecord) -> str:
    sustained = f"; {SUSTAINED_NOTE}" if report.settings.get("duration_s") else ""
    return (
        "size: the weights as llama.cpp counts them (as llama-bench shows), else the model "
        f"file; t/s: mean ± std over {repetitions_text(report.settings)}, KV cache cleared "
        "each time; ±%: std/mean; others: the most CPU other processes took during one "
        "repetition; RSS: peak of the worker process (one per model and thread count)"
        f"{sustained}{timing_note(report.settings)}"
    )


def bench_table(report: BenchRecord) -> Table:
    rows = speed_rows(report)
    table = Table(
        title=escape(f"edgebench bench · {device_line(report)}"),
        title_justify="left",
        caption=caption(report),
        caption_justify="left",
    )
    sustained = is_sustained(rows)
    for header in headers(rows):
        table.add_column(header, justify="left" if header in _LEFT else "right")
    for row in rows:
        style = "yellow" if flags(row) else None
        table.add_row(*(escape(cell) for cell in _cells(row, sustained)), style=style)
    return table


# csv: every figure of a row, the per-repetition lists left to the JSON
CSV_FIELDS = tuple(
    f.name
    for f in fields(BenchRow)
    if f.name not in ("seconds", "tok_s", "cpu_others", "cpu_steal", "t_start", "t_end")
)


def rows_markdown(rows: list[BenchRow]) -> str:
    """llama-bench's `-o md`: a pipe table, numbers right-aligned."""
    shown, sustained = headers(rows), is_sustained(rows)
    align = ["---" if h in _LEFT else "---:" for h in shown]
    lines = ["| " + " | ".join(shown) + " |", "| " + " | ".join(align) + " |"]
    for row in rows:
        cells = (c.replace("|", "\\|") for c in _cells(row, sustained))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def rows_csv(rows: list[BenchRow]) -> str:
    """llama-bench's `-o csv`: a header, then one line per row."""
    text = io.StringIO()
    writer = csv.DictWriter(text, CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(row.to_json() for row in rows)
    return text.getvalue()


def rows_json(rows: list[BenchRow]) -> str:
    """llama-bench's `-o json`: the list of rows (`BenchRow`), every repetition kept."""
    return json_text([row.to_json() for row in rows])


RENDERERS = {"md": rows_markdown, "csv": rows_csv, "json": rows_json}


def bench_notes(report: BenchRecord) -> list[str]:
    """One line per row that is not clean, saying why."""
    notes = []
    several = len(_models(report)) > 1
    for row in report.results:
        reasons = flags(row)
        if reasons:
            which = f"{row.model} " if several else ""
            notes.append(f"{which}{row.test} (threads {row.threads}): " + "; ".join(reasons))
    return notes
