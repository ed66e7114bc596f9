"""The sweep of a run with several model variants (quantizations of one base, say): one
row per variant and constraint mode with its task scores, fidelity to the most precise
variant (fidelity.json), speed, peak RSS and file size, and whether it is on the Pareto
front of accuracy, file size, decode tokens/s and peak RSS (summary/pareto.py).

One list of rows feeds the terminal table, the card's Markdown table, the HTML report
and the plot, so they always agree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from edgebench.analysis.figures import PREFERRED_METRICS, headline_scores
from edgebench.analysis.rundata import ArmView, LoadedRun, arms
from edgebench.errors import UserError
from edgebench.models.quant_types import precision_rank
from edgebench.runfolder.read import read_fidelity
from edgebench.runfolder.records import FidelityRecord
from edgebench.summary.pareto import Point, dominated_by


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
    scores = headline_scores(metric_names(chosen))
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
