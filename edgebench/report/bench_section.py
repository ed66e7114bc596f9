"""`card` and `report` given what `edgebench bench` wrote: a speed table (tokens/s of
every pp and tg row, peak memory, quantization, device; a `--duration` bench's first
minute, last minute and drop), in Markdown for the card and as an HTML section for the
report, where a `--duration` bench also plots tokens/s against time."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import UserError
from edgebench.report.bench_table import (
    SUSTAINED_HEADERS,
    SUSTAINED_NOTE,
    is_sustained,
    rate_text,
    repetitions_text,
    rss_text,
    speed_rows,
    sustained_cells,
    timing_note,
)
from edgebench.runfolder.read import read_bench
from edgebench.runfolder.records import BenchRecord, BenchRow

# The card's and report's speed table: what a reader compares, llama-bench's columns
# that describe the model file left to the bench's own table. The device is a column
# when the rows come from several devices, else one line above the table.
SPEED_HEADERS = ("model", "quant", "device", "threads", "test", "tok/s", "peak RSS MiB")
_NUMERIC = {"threads", "tok/s", "peak RSS MiB", *SUSTAINED_HEADERS}
_KINDS = (
    "pp: prompt processing (N prompt tokens in one batch); tg: generation (N tokens, one "
    "at a time); @ dD: after D tokens in the KV cache"
)


@dataclass(frozen=True)
class BenchView:
    """One bench file: its rows, and what they need said."""

    path: Path
    rows: list[BenchRow]
    caption: str
    status: str  # completed, interrupted ... ("completed" for a list of rows)

    @property
    def device(self) -> str | None:
        """The one device of every row (None: several, or not said)."""
        devices = {row.device for row in self.rows}
        return str(devices.pop()) if len(devices) == 1 and None not in devices else None

    @property
    def sustained(self) -> bool:
        """Rows of a `--duration` bench: with their first minute, last minute and drop."""
        return is_sustained(self.rows)

    @property
    def headers(self) -> tuple[str, ...]:
        shown = tuple(h for h in SPEED_HEADERS if h != "device" or self.device is None)
        if not self.sustained:
            return shown
        at = shown.index("tok/s") + 1
        return shown[:at] + SUSTAINED_HEADERS + shown[at:]

    def cells(self, row: BenchRow) -> tuple[str, ...]:
        cells = dict(zip(SPEED_HEADERS, _cells(row), strict=True))
        cells.update(zip(SUSTAINED_HEADERS, sustained_cells(row), strict=True))
        return tuple(cells[h] for h in self.headers)


def load_bench(path: Path, model: str | None = None) -> BenchView:
    """A bench file as a view; with `model`, that model's rows only."""
    read = read_bench(path)
    repetitions, status, timing = "the repetitions", "completed", ""
    if isinstance(read, BenchRecord):
        rows, status = speed_rows(read), read.status
        repetitions = repetitions_text(read.settings)
        timing = timing_note(read.settings)
    else:
        rows = list(read)
    note = (
        f"tok/s: mean ± std over {repetitions}, KV cache cleared each time; peak RSS: of "
        "the worker process (one per model and thread count)"
    )
    if is_sustained(rows):
        note += f"; {SUSTAINED_NOTE}"
    note += timing
    if model is not None:
        labels = list(dict.fromkeys(str(r.model) for r in rows))
        if model not in labels:
            raise UserError(f"--model {model!r}: not in {path} (it has {', '.join(labels)})")
        rows = [r for r in rows if r.model == model]
    return BenchView(path, rows, note, status)


def is_bench_file(path: Path) -> bool:
    """A run folder is a folder; a file given instead is read as bench JSON."""
    return path.is_file()


def _cells(row: BenchRow) -> tuple[str, ...]:
    return (
        str(row.model),
        str(row.quantization or "-"),
        str(row.device or "-"),
        str(row.threads),
        str(row.test),
        rate_text(row),
        rss_text(row),
    )


def _partial(view: BenchView) -> str | None:
    if view.status == "completed":
        return None
    return f"The bench ended {view.status}: these are the rows it measured before."


def bench_markdown(view: BenchView) -> str:
    """The card of a bench: a title, the speed table and what its figures are."""
    models = ", ".join(dict.fromkeys(str(r.model) for r in view.rows))
    lines = [f"# Speed of {models}", ""]
    if view.device:
        lines += [f"Device: {view.device}", ""]
    if _partial(view):
        lines += [f"> **{_partial(view)}**", ""]
    lines += [
        "| " + " | ".join(view.headers) + " |",
        "| " + " | ".join("---:" if h in _NUMERIC else "---" for h in view.headers) + " |",
    ]
    for row in view.rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in view.cells(row)) + " |")
    lines += [
        "",
        f"{_KINDS}. {view.caption}.",
        "",
        f"Measured with `edgebench bench` ({view.path.name}).",
    ]
    return "\n".join(lines) + "\n"


def _speed_figure(view: BenchView) -> str:
    """A `--duration` bench's tokens/s over time, as a figure (empty for other benches)."""
    from edgebench.report.html import plot_entries
    from edgebench.report.plots import speed_over_time

    plot = speed_over_time(view.rows, view.device) if view.sustained else None
    if plot is None:
        return ""
    (entry,) = plot_entries([plot])
    return (
        f'<figure><img src="{entry["data_uri"]}" alt="{html.escape(entry["title"])}" '
        f'width="{entry["width"]}" height="{entry["height"]}">'
        f"<figcaption>{html.escape(entry['caption'])}</figcaption></figure>"
    )


def bench_html(views: list[BenchView]) -> str:
    """One HTML section per bench file, for the report page (no style, no script: the
    page's content security policy stays as it is); a `--duration` bench with its plot
    of tokens/s over time."""
    parts = []
    for view in views:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in view.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in view.cells(row)) + "</tr>"
            for row in view.rows
        )
        partial = _partial(view)
        device = f"<p>Device: {html.escape(view.device)}</p>" if view.device else ""
        parts.append(
            '<section class="bench">'
            f"<h2>Speed · {html.escape(view.path.name)}</h2>{device}"
            + (f"<p><strong>{html.escape(partial)}</strong></p>" if partial else "")
            + f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<p>{html.escape(f'{_KINDS}. {view.caption}.')}</p>{_speed_figure(view)}</section>"
        )
    return "\n".join(parts)


def with_bench_sections(page: str, views: list[BenchView]) -> str:
    """The report page with the bench sections at its end."""
    if not views:
        return page
    end = page.rindex("</body>")
    return page[:end] + bench_html(views) + "\n" + page[end:]


def bench_page(views: list[BenchView], title: str | None) -> str:
    """A page of bench sections alone (a report given bench files only)."""
    models = ", ".join(dict.fromkeys(str(r.model) for v in views for r in v.rows))
    name = html.escape(title or f"edgebench bench · {models}")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        'img-src data:">'
        f"<title>{name}</title></head><body><h1>{name}</h1>\n{bench_html(views)}\n"
        "</body></html>\n"
    )
