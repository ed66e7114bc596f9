"""What `edgebench run` prints by default: a screen, not a report. The task's scores per
arm with their 95% intervals, one performance table, one line per warning; the groups,
totals, differences and coverage are behind `--verbose` (report/table.py) and in
`edgebench compare`. The same tables give `--format md` and `--format csv`."""

from __future__ import annotations

import copy
from typing import Any

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table

from edgebench.report import formats
from edgebench.report.compare import task_columns
from edgebench.report.facts import INDICATIVE, NO_VALUE, indicative, interval_text
from edgebench.report.fit import fitted
from edgebench.report.table import _Arms, _shown_arms
from edgebench.runfolder.records import ArmSummary, Summary
from edgebench.system.cpu_share import CONTENDED_SHARE


def _figure(value: Any, interval: list[float] | None, digits: int, ci_digits: int) -> str:
    """A value over its 95% interval (two lines: the column stays narrow)."""
    if value is None:
        return NO_VALUE
    text = f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    ci = interval_text(interval, ci_digits)
    return f"{text}\n{ci}" if ci else text


def _table(title: str, shown: _Arms) -> Table:
    table = Table(title=escape(title), title_justify="left", box=box.SIMPLE_HEAD)
    table.show_edge = False
    for header in shown.headers:
        table.add_column(escape(header), no_wrap=True)
    return table


def _labels(shown: _Arms, arm: ArmSummary) -> list[str]:
    return [escape(label) for label in shown.labels(arm)]


def scores_table(shown: _Arms) -> Table:
    """The task's headline scores (`compare`'s columns) over each arm, each over its
    95% interval (a rate's to 2 digits)."""
    columns = task_columns([shown.summary])
    table = _table(shown.title(shown.summary.task), shown)
    table.add_column("n", justify="right")
    for header, _, _, _ in columns:
        table.add_column(escape(header), justify="right")
    for arm in shown.arms:
        ci95 = arm.task.ci95 if arm.task is not None else {}
        cells = [_figure(read(arm), ci95.get(key), d, 2) for _, key, read, d in columns]
        table.add_row(*_labels(shown, arm), str(arm.n_scored), *cells)
    return table


# (header, Perf field, digits): p50 over the examples, with its interval.
_SPEED = (("TTFT s", "ttft_s", 3), ("decode tok/s", "decode_tok_s", 1))


def speed_table(shown: _Arms) -> Table:
    """p50 TTFT and decode tokens/s over their 95% intervals, and peak RSS, per arm."""
    table = _table("performance · p50 over the examples", shown)
    for header, _, _ in _SPEED:
        table.add_column(header, justify="right")
    table.add_column("peak RSS MiB", justify="right")
    for arm in shown.arms:
        perf = arm.perf
        cells = [
            _figure(getattr(perf, key).p50, perf.p50_ci95.get(key), digits, digits)
            for _, key, digits in _SPEED
        ]
        if perf.ttft_warm and cells[0] != NO_VALUE:  # a prefix cache kept the shared prefix
            value, *interval = cells[0].split("\n")
            cells[0] = "\n".join([value + "w", *interval])
        rss = f"{perf.peak_rss_mb:.0f}" if perf.peak_rss_mb is not None else NO_VALUE
        table.add_row(*_labels(shown, arm), *cells, rss)
    return table


def warnings(summary: Summary, shown: _Arms) -> list[str]:
    """One line each: arms not run, contended speed, skipped examples, a small n."""
    lines = [
        f"skipped: {a.model} · {a.constraint}: {a.skip_reason}"
        for a in summary.arms
        if a.skip_reason
    ]
    for arm in shown.arms:
        label = " · ".join(shown.labels(arm)) or arm.constraint
        if arm.perf.contended_examples:
            lines.append(
                f"not clean: {label}: {arm.perf.contended_examples} of "
                f"{arm.perf.latency_s.n} timed examples ran while others took more than "
                f"{100 * CONTENDED_SHARE:g}% of the CPU"
            )
        if arm.n_skipped:
            lines.append(f"{label}: {arm.n_skipped} examples skipped (longer than the context)")
    n_scored = min(a.n_scored for a in shown.arms)
    if indicative(n_scored):
        lines.append(f"⚠ {INDICATIVE}: {n_scored} examples scored")
    return lines


def render_compact(summary: Summary) -> Group:
    """The scores and speed tables, then the warnings, one line each."""
    shown = _shown_arms(summary)
    notes = [f"[yellow]{escape(line)}[/]" for line in warnings(summary, shown)]
    hint = "[dim]groups, totals, differences: --verbose, or edgebench compare RUN_DIR[/]"
    return Group(fitted(scores_table(shown)), "", fitted(speed_table(shown)), *notes, hint)


def _joined(first: Table, second: Table, labels: int) -> Table:
    """`first`'s columns, then `second`'s after its `labels` label columns (same rows)."""
    table = copy.copy(first)
    table.columns = [copy.copy(c) for c in first.columns + second.columns[labels:]]
    return table


def formatted(summary: Summary, output_format: str) -> str:
    """`--format md`: both tables and the warnings; `csv`: one row per arm, every column
    of both tables."""
    shown = _shown_arms(summary)
    scores, speed = scores_table(shown), speed_table(shown)
    if output_format == "csv":
        return formats.csv_text(_joined(scores, speed, len(shown.headers)))
    return formats.markdown([scores, speed], warnings(summary, shown))
