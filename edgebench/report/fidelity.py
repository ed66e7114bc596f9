"""The table `edgebench fidelity` prints: each variant against its reference."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from edgebench.report.facts import NO_VALUE
from edgebench.runfolder.records import FidelityRecord


def _cell(value: float | None, digits: int) -> str:
    return NO_VALUE if value is None else f"{value:.{digits}f}"


def fidelity_table(record: FidelityRecord) -> Table:
    """One row per variant: KL mean, median, p99 (nats), top-1 agreement, positions."""
    table = Table(
        title=escape(f"fidelity to {record.reference} ({record.reference_quantization or '?'})"),
        title_justify="left",
    )
    for header in ("variant", "quant", "vs"):
        table.add_column(header, no_wrap=True)
    for header in ("KL mean", "KL median", "KL p99", "top-1", "examples", "positions", "s"):
        table.add_column(header, justify="right")
    for label, v in record.variants.items():
        if v.status != "completed":
            figures = [v.status, "", "", "", "", "", _cell(v.wall_s, 1)]
        else:
            figures = [
                _cell(v.kl_mean, 4),
                _cell(v.kl_median, 4),
                _cell(v.kl_p99, 4),
                _cell(v.top1_agreement, 3),
                str(v.prompts),
                str(v.positions),
                _cell(v.wall_s, 1),
            ]
        vs = escape(v.reference or record.reference)
        table.add_row(escape(label), escape(v.quantization or NO_VALUE), vs, *figures)
    table.caption = (
        "KL(reference || variant) of the next-token distributions, nats, per answer "
        "position (teacher forcing on the run's prompts and expected answers); top-1: "
        "share of positions whose most likely token is the same; s: seconds, both models "
        "loaded. Definitions: docs/metrics.md."
    )
    return table
