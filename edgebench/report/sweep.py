"""The sweep of a run with several model variants (quantizations of one base, say): one
row per variant and constraint mode with its task scores, fidelity to the most precise
variant (fidelity.json), speed, peak RSS and file size, and whether it is on the Pareto
front of accuracy, file size, decode tokens/s and peak RSS (summary/pareto.py).

One list of rows feeds the terminal table, the card's Markdown table, the HTML report
and the plot, so they always agree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from rich.markup import escape
from rich.table import Table

from edgebench.analysis.rundata import ArmView, LoadedRun, arms
from edgebench.errors import UserError
from edgebench.models.quant_types import precision_rank
from edgebench.report import facts
from edgebench.report import markdown as md
from edgebench.report.compare import ACCURACY, DEEPJSON_ACCURACY, with_interval
from edgebench.report.plots import PREFERRED_METRICS
from edgebench.runfolder.read import read_fidelity
from edgebench.runfolder.records import FidelityRecord
from edgebench.summary.pareto import Point, dominated_by

REQUANTIZED_MARK = "†"
FRONT_MARK = {True: "yes", False: "no"}
SWEEP_NOTE = (
    "One row per variant and constraint mode. front: on the Pareto front of accuracy ↑, "
    "file size ↓, decode tok/s ↑ and peak RSS ↓ (no other row is as good on all four and "
    "better on one). KL: mean KL divergence of the next-token distribution from the most "
    "precise variant's (↓); top-1: share of positions with its same next token (↑); "
    "both teacher-forced on the run's prompts and expected answers. tok/s: p50 over "
    "examples. size: the model file (MB = 10^6 bytes); peak RSS: the arm's worker "
    "(MiB = 2^20 bytes)."
)


@dataclass(frozen=True)
class SweepRow:
    arm: ArmView
    quantization: str | None
    kl_mean: float | None
    top1: float | None
    size_mb: float | None
    note: str | None  # the variant was requantized: what that means for its quality
    accuracy: float | None  # the metric the front is drawn on
    dominated_by: tuple[str, ...] = ()

    @property
    def model(self) -> str:
        return self.arm.model

    @property
    def constraint(self) -> str:
        return self.arm.constraint

    @property
    def key(self) -> str:
        return f"{self.model} · {self.constraint}"

    @property
    def decode_tok_s(self) -> float | None:
        return self.arm.result.perf.decode_tok_s.p50

    @property
    def prefill_tok_s(self) -> float | None:
        return self.arm.result.perf.prefill_tok_s.p50

    @property
    def peak_rss_mb(self) -> float | None:
        return self.arm.result.perf.peak_rss_mb

    @property
    def on_front(self) -> bool:
        return not self.dominated_by

    def point(self) -> Point:
        return Point(
            self.key,
            {
                "accuracy": self.accuracy,
                "size_mb": self.size_mb,
                "decode_tok_s": self.decode_tok_s,
                "peak_rss_mb": self.peak_rss_mb,
            },
        )


@dataclass(frozen=True)
class Sweep:
    run: LoadedRun
    metric: str  # the accuracy figure of the front
    scores: list[str]  # the task's headline figures shown
    rows: list[SweepRow]
    fidelity: FidelityRecord | None

    @property
    def several_variants(self) -> bool:
        """Several models or quantizations: a sweep, not one model's constraint modes."""
        return len({r.model for r in self.rows}) > 1

    @property
    def notes(self) -> list[str]:
        """Each requantization note once, with the variants it is about."""
        by_note: dict[str, dict[str, None]] = {}
        for r in self.rows:
            if r.note:
                by_note.setdefault(r.note, {})[r.quantization or r.model] = None
        return [f"{', '.join(names)}: {note}" for note, names in by_note.items()]


def is_sweep(run: LoadedRun) -> bool:
    """A run of several models with scores: their sweep is worth a table and a plot (a
    run stopped before its first score has none to show)."""
    return len(run.summary.models) > 1 and bool(metric_names(_scored(run, None)))


def metric_names(run_arms: Sequence[ArmView]) -> list[str]:
    return list(dict.fromkeys(m for arm in run_arms for m in arm.metrics))


def pick_metric(run_arms: Sequence[ArmView], metric: str | None) -> str:
    """`metric` when the arms have it, else the task's headline one; a one-line error
    naming what they have."""
    available = metric_names(run_arms)
    if metric is None:
        return next((m for m in PREFERRED_METRICS if m in available), available[0])
    if metric not in available:
        raise UserError(
            f"--metric {metric}: not a figure of this run (it has {', '.join(available)})"
        )
    return metric


def pick_arm(run: LoadedRun, arm: str | None) -> str | None:
    if arm is not None and arm not in run.summary.constraints:
        have = ", ".join(run.summary.constraints)
        raise UserError(f"--arm {arm}: not a constraint mode of this run (it has {have})")
    return arm


def _scored(run: LoadedRun, constraint: str | None) -> list[ArmView]:
    return [
        a
        for a in arms(run)
        if a.result.skip_reason is None
        and a.result.n_scored > 0
        and (constraint is None or a.result.constraint == constraint)
    ]


def build_sweep(run: LoadedRun, metric: str | None = None, constraint: str | None = None) -> Sweep:
    """The rows of a run (of one constraint mode when given), most precise variant
    first, each with its place on the front among them."""
    chosen = _scored(run, pick_arm(run, constraint))
    if not chosen:
        mode = f" under {constraint}" if constraint else ""
        raise UserError(
            f"{run.path}: no arm of the run scored an example{mode}: nothing to compare"
        )
    name = pick_metric(chosen, metric)
    fidelity = read_fidelity(run.path)
    order = {label: i for i, label in enumerate(run.summary.models)}
    rows = [_row(run, arm, name, fidelity) for arm in chosen]
    rows.sort(key=lambda r: (-precision_rank(r.quantization), order.get(r.model, 0)))
    beaten = dominated_by([r.point() for r in rows])
    rows = [replace(r, dominated_by=tuple(beaten[r.key])) for r in rows]
    scores = facts.headline_scores(metric_names(chosen))
    scores += [name] if name not in scores else []  # the front's figure is always shown
    return Sweep(run, name, scores, rows, fidelity)


def _row(run: LoadedRun, arm: ArmView, metric: str, fidelity: FidelityRecord | None) -> SweepRow:
    record = run.manifest.model(arm.model)
    kl = top1 = None
    if fidelity is not None:
        if (variant := fidelity.variants.get(arm.model)) is not None:
            kl, top1 = variant.kl_mean, variant.top1_agreement
        elif fidelity.is_reference(arm.model):
            kl, top1 = 0.0, 1.0  # the reference against itself
    source = record.quantized_from
    note = source.note if source is not None and source.requantized else None
    return SweepRow(
        arm=arm,
        quantization=record.quantization,
        kl_mean=kl,
        top1=top1,
        size_mb=record.size_bytes / 1e6 if record.size_bytes else None,
        note=note,
        accuracy=arm.metrics.get(metric),
    )


# -- the table's columns: (header, how to read a row, digits) -------------------------
COST_COLUMNS: tuple[tuple[str, Any, int], ...] = (
    ("KL ↓", lambda r: r.kl_mean, 4),
    ("top-1 ↑", lambda r: r.top1, 3),
    ("decode tok/s ↑", lambda r: r.decode_tok_s, 1),
    ("prefill tok/s ↑", lambda r: r.prefill_tok_s, 1),
    ("peak RSS MiB ↓", lambda r: r.peak_rss_mb, 0),
    ("size MB ↓", lambda r: r.size_mb, 1),
)


def _quant(row: SweepRow) -> str:
    text = row.quantization or facts.NO_VALUE
    return text + REQUANTIZED_MARK if row.note else text


def headers(sweep: Sweep) -> list[str]:
    scores = [f"{facts.metric_label(m)} ↑" for m in sweep.scores]
    return ["variant", "quant", "mode", "n", *scores, *(h for h, _, _ in COST_COLUMNS), "front"]


def cells(sweep: Sweep, row: SweepRow, intervals: bool = True) -> list[str]:
    """A row's cells as text; a score with its 95% interval after it."""
    scores = []
    for name in sweep.scores:
        interval = row.arm.intervals.get(name)
        text = facts.fmt(row.arm.metrics.get(name))
        scores.append(f"{text} {facts.interval_text(interval)}".strip() if intervals else text)
    costs = [facts.fmt(read(row), digits) for _, read, digits in COST_COLUMNS]
    return [
        row.model,
        _quant(row),
        row.constraint,
        str(row.arm.result.n_scored),
        *scores,
        *costs,
        FRONT_MARK[row.on_front],
    ]


def footnotes(sweep: Sweep) -> list[str]:
    """What the table's marks mean: the requantized notes, fidelity missing."""
    notes = [f"{REQUANTIZED_MARK} {note}." for note in sweep.notes]
    if sweep.fidelity is None:
        notes.append("KL, top-1: no fidelity.json in this run (`edgebench fidelity RUN`).")
    else:
        notes.append(
            f"KL, top-1 against {sweep.fidelity.reference} "
            f"({sweep.fidelity.reference_quantization or '?'}) over "
            f"{facts.fmt(sweep.fidelity.positions)} token positions."
        )
    if any(facts.indicative(r.arm.result.n_scored) for r in sweep.rows):
        notes.append(f"⚠ {facts.INDICATIVE}: a front drawn on few examples can move.")
    return notes


# The terminal's short headers, as `edgebench compare` names the same figures.
SHORT_SCORES = {key: header for header, key, _, _ in (*ACCURACY, *DEEPJSON_ACCURACY)}
SHORT_COSTS = ("KL", "top-1", "tok/s", "prefill", "RSS MiB", "size MB")


def sweep_table(sweep: Sweep) -> Table:
    """The terminal table, headers as short as `compare`'s and each interval under its
    score (report/fit.py splits it at 80 columns, names and numbers whole)."""
    metric = facts.metric_label(sweep.metric)
    kind = "sweep" if sweep.several_variants else "constraint modes"
    table = Table(
        title=escape(f"{kind} · {sweep.run.run_id} · front on {metric}"),
        title_justify="left",
        caption_justify="left",
    )
    for header in ("variant", "quant", "mode"):
        table.add_column(header, no_wrap=True)
    shown = [SHORT_SCORES.get(m, facts.metric_label(m)) for m in sweep.scores]
    for header in ("n", *shown, *SHORT_COSTS, "front"):
        table.add_column(escape(header), justify="right")
    for row in sweep.rows:
        texts = cells(sweep, row, intervals=False)
        scores = [
            with_interval(texts[4 + i], row.arm.intervals.get(m))
            for i, m in enumerate(sweep.scores)
        ]
        table.add_row(*map(escape, [*texts[:4], *scores, *texts[4 + len(scores) :]]))
    legend = (
        "↑ higher is better: the scores, top-1, tok/s (decode), prefill (tok/s); ↓ lower: "
        "KL, RSS MiB, size MB. Under a score: its 95% interval lo–hi (.55 = 0.55)."
    )
    table.caption = escape("\n".join([*footnotes(sweep), legend, SWEEP_NOTE]))
    return table


def sweep_markdown(sweep: Sweep) -> str:
    """The card's table, its notes under it."""
    rows = [cells(sweep, row) for row in sweep.rows]
    notes = "\n\n".join(md.text(n) for n in [*footnotes(sweep), SWEEP_NOTE])
    return f"{md.table(headers(sweep), rows, align_right_from=3)}\n\n{notes}"


def sweep_json(sweep: Sweep) -> list[dict[str, Any]]:
    """The rows as numbers, for `--json`."""
    return [
        {
            "model": r.model,
            "quantization": r.quantization,
            "constraint": r.constraint,
            "n": r.arm.result.n_scored,
            "scores": {m: r.arm.metrics.get(m) for m in sweep.scores},
            "ci95": {m: r.arm.intervals.get(m) for m in sweep.scores},
            "accuracy": r.accuracy,
            "kl_mean": r.kl_mean,
            "top1_agreement": r.top1,
            "decode_tok_s_p50": r.decode_tok_s,
            "decode_tok_s_p50_ci95": r.arm.result.perf.p50_ci95.get("decode_tok_s"),
            "prefill_tok_s_p50": r.prefill_tok_s,
            "peak_rss_mib": r.peak_rss_mb,
            "size_mb": r.size_mb,
            "on_front": r.on_front,
            "dominated_by": list(r.dominated_by),
            "note": r.note,
        }
        for r in sweep.rows
    ]
