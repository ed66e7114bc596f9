"""What `edgebench recommend` prints: the sweep table, the picks with their reasons,
the variants left out with why, the Raspberry Pi verdicts; or all of it as JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from edgebench.analysis.figures import metric_label
from edgebench.analysis.recommend import (
    DEVICES,
    PI_RESERVE_MB,
    TIGHT_SHARE,
    Candidate,
    Recommendation,
    device_verdict,
)
from edgebench.report import facts, formats
from edgebench.report.fit import Fitted
from edgebench.report.sweep_view import sweep_json, sweep_table


def _budget(rec: Recommendation) -> str:
    parts = [
        f"budget {rec.budget_mb:.0f} MiB" if rec.budget_mb is not None else "no memory budget",
        f"min {metric_label(rec.sweep.metric)} {rec.min_accuracy:g}"
        if rec.min_accuracy is not None
        else f"{metric_label(rec.sweep.metric)} above 0",  # the default floor
    ]
    return " · ".join(parts)


def _memory(c: Candidate) -> str:
    if c.need_mb is None:
        return "memory unknown"
    if c.kv_mb is None:
        return f"needs {c.need_mb:.0f} MiB (peak RSS)"
    how = "inside the peak RSS" if c.kv_in_peak else "added to the peak RSS"
    return f"needs {c.need_mb:.0f} MiB (KV cache {c.kv_mb:.0f} MiB {how})"


def pick_text(rec: Recommendation, c: Candidate) -> str:
    row = c.row
    metric = metric_label(rec.sweep.metric)
    interval = facts.interval_text(row.arm.intervals.get(rec.sweep.metric))
    figures = [
        f"{metric} {facts.fmt(row.accuracy)} {interval}".strip(),
        " ".join(
            part
            for part in (
                f"{facts.fmt(row.decode_tok_s, 1)} tok/s",
                facts.interval_text(row.arm.result.perf.p50_ci95.get("decode_tok_s"), 1),
            )
            if part
        ),
        f"{facts.fmt(row.size_mb, 1)} MB file",
        _memory(c),
    ]
    spare = (
        f", {rec.budget_mb - c.need_mb:.0f} MiB to spare"
        if rec.budget_mb is not None and c.need_mb is not None
        else ""
    )
    why = "on the front among those that fit" + spare + ": " + ", ".join(c.strengths)
    note = f" ({row.note})" if row.note else ""
    return f"{row.key}: {why}; {'; '.join(figures)}{note}"


def devices_table(rec: Recommendation) -> Table:
    table = Table(
        title=DEVICES_TITLE,
        title_justify="left",
        caption_justify="left",
    )
    for index, header in enumerate(DEVICE_HEADERS):
        table.add_column(header, justify="left" if index == 0 else "right", no_wrap=index == 0)
    for row in device_rows(rec):
        table.add_row(*map(escape, row))
    table.caption = escape(device_note())
    return table


def verdict_lines(rec: Recommendation) -> list[str]:
    """The picks with their reasons, then the variants left out with why."""
    lines = [f"✓ {pick_text(rec, c)}" for c in rec.picks]
    if not rec.picks:
        lines.append("no variant fits: every one is left out below")
    return lines + [f"✗ {c.row.key}: {'; '.join(c.reasons)}" for c in rec.excluded]


def render(rec: Recommendation) -> RenderableType:
    lines: list[RenderableType] = [Fitted(sweep_table(rec.sweep, fold_runtime=True)), Text("")]
    lines.append(Text(f"recommend · {_budget(rec)}", style="bold"))
    lines += [Text(line) for line in verdict_lines(rec)]
    lines += [Text(""), Fitted(devices_table(rec))]
    return Group(*lines)


def formatted(rec: Recommendation, output_format: str) -> str:
    """`--format md`: the sweep table, the verdicts, the devices table; `csv`: the sweep
    table's rows."""
    if output_format == "csv":
        return formats.csv_text(sweep_table(rec.sweep))
    head = formats.markdown([sweep_table(rec.sweep)])
    verdicts = [f"recommend · {_budget(rec)}", *verdict_lines(rec)]
    return head + "\n" + formats.markdown([devices_table(rec)], verdicts)


def as_json(rec: Recommendation) -> dict[str, Any]:
    """The recommendation as numbers: memory in MiB (`*_mib`), file sizes in MB (10^6)."""
    rows = {r["model"] + " · " + r["constraint"]: r for r in sweep_json(rec.sweep)}
    return {
        "run": rec.sweep.run.run_id,
        "metric": rec.sweep.metric,
        "budget_mib": rec.budget_mb,
        "min_accuracy": rec.min_accuracy,
        "picks": [c.row.key for c in rec.picks],
        "variants": [
            {
                **rows[c.row.key],
                "need_mib": c.need_mb,
                "kv_cache_mib": c.kv_mb,
                "kv_in_peak_rss": c.kv_in_peak,
                "picked": c.picked,
                "reasons": list(c.reasons),
                "strengths": list(c.strengths),
                "devices": {
                    f"{d.name} {d.ram_gb} GB": device_verdict(c.need_mb, d) for d in DEVICES
                },
            }
            for c in rec.candidates
        ],
        "devices": [
            {"name": d.name, "ram_gb": d.ram_gb, "usable_mib": d.usable_mb} for d in DEVICES
        ],
        "fidelity_reference": rec.sweep.fidelity.reference if rec.sweep.fidelity else None,
    }


DEVICES_TITLE = "Raspberry Pi 4/5: does it fit? (memory)"
DEVICE_HEADERS = ["variant · mode", "needs MiB", *(f"{d.ram_gb} GB" for d in DEVICES)]


def device_rows(rec: Recommendation) -> list[list[str]]:
    """Per variant and mode: its need and the verdict on each board (DEVICE_HEADERS)."""
    return [
        [c.row.key, facts.fmt(c.need_mb, 0), *(device_verdict(c.need_mb, d) for d in DEVICES)]
        for c in rec.candidates
    ]


def device_note() -> str:
    usable = ", ".join(f"{d.ram_gb} GB: {d.usable_mb} MiB" for d in DEVICES)
    return (
        f"Usable memory assumed (not measured on a Pi): RAM minus {PI_RESERVE_MB} MiB for "
        f"Raspberry Pi OS Lite, the kernel and the firmware's reserve ({usable}). Verdicts "
        "from the measured need on this run's device; a Pi's own build and kernel may "
        f"differ by a few MB. tight: fits with less than {TIGHT_SHARE:.0%} of usable "
        "memory left. Memory only: speed on a Pi is not predicted."
    )
