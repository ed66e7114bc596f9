"""`edgebench recommend`: which variants of a sweep (or constraint modes of a run) to
ship under a memory budget and an accuracy floor, each with its reason, the others with
why not; and whether each fits a Raspberry Pi 4/5 with 2, 4 or 8 GB.

Memory a variant needs (`need_mb`) comes from what was measured, never from the file
size alone:
- llama.cpp (GGUF): the arm's peak RSS. It already holds the KV cache at the run's
  context: llama.cpp allocates the whole cache for n_ctx when the context is created and
  clears it (writes every page), so adding `kv_bytes` again would count it twice.
- ONNX: the peak RSS plus the KV cache at the run's context (`kv_bytes` of the memory
  pre-check): its cache grows with each request, so the peak holds only what the run's
  longest request used. An upper bound: that part is counted twice.

The pick: variants over the budget, with no score, scoring 0 or under the accuracy floor
are left out first; the Pareto front (accuracy ↑, file size ↓, decode tok/s ↑, peak RSS
↓) is then drawn among the ones left, and each pick says on which objectives none of them
beats it ("most accurate" means among those that fit). It is called fastest only when
its decode p50's 95% interval lies wholly above every other's, leanest only when its
peak RSS is more than `MEMORY_NOISE` under every other's, smallest only when its file
is smaller than every other's; best but not apart is "no measurable difference".
Memory is MiB (2^20 bytes), file sizes MB (10^6 bytes).
"No variant fits" is a result (exit 0), not an error."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from edgebench.analysis.figures import metric_label
from edgebench.analysis.rundata import LoadedRun
from edgebench.analysis.sweep import Sweep, SweepRow, build_sweep
from edgebench.errors import UserError
from edgebench.runtimes import runtime_info
from edgebench.summary.pareto import OBJECTIVES, dominated_by

MIB = 1024 * 1024
_UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$", re.IGNORECASE)
# Peak RSS readings of one model's arms differ by allocator noise (a fraction of a MiB):
# less than this share apart is no measurable difference.
MEMORY_NOISE = 0.01


def parse_memory(text: str, option: str = "--max-memory") -> int:
    """ "4GB" (10^9), "512MB", "4GiB" (2^30) ... -> bytes; a one-line error otherwise."""
    match = _SIZE.match(text)
    unit = match and _UNITS.get(match.group(2).lower())
    if match is None or unit is None:
        raise UserError(
            f"{option} {text}: not a memory size; give a number and a unit, e.g. 4GB, "
            "512MB or 4GiB (GB = 10^9 bytes, GiB = 2^30)"
        )
    value = float(match.group(1)) * unit
    if value <= 0:
        raise UserError(f"{option} {text}: must be more than 0")
    return int(value)


@dataclass(frozen=True)
class Board:
    """A board with a RAM size and what its OS leaves to a model (an assumption)."""

    name: str
    ram_gb: int
    reserve_mb: int  # kernel, firmware carve-out and an idle OS

    @property
    def usable_mb(self) -> int:
        return self.ram_gb * 1024 - self.reserve_mb


# Raspberry Pi 4 and 5 come with the same RAM sizes; their memory verdict is the same.
# The reserve is an assumption, not a measurement: Raspberry Pi OS Lite (64-bit, no
# desktop) after boot, plus the kernel's and the firmware's reserved memory (the GPU
# carve-out, CMA), about 448 MiB in all, leaving 1.6 GiB of a 2 GB board.
PI_RESERVE_MB = 448
DEVICES = tuple(Board("Raspberry Pi 4/5", gb, PI_RESERVE_MB) for gb in (2, 4, 8))
# Less free than this share of usable memory: fits, but the page cache and anything
# else running will compete with it.
TIGHT_SHARE = 0.10


@dataclass(frozen=True)
class Candidate:
    row: SweepRow
    need_mb: float | None
    kv_mb: float | None  # KV cache at the run's context
    kv_in_peak: bool  # the peak RSS already holds it
    reasons: tuple[str, ...]  # why it was left out (empty: picked)
    strengths: tuple[str, ...] = ()  # what a picked one is best at among those that fit

    @property
    def picked(self) -> bool:
        return not self.reasons


@dataclass(frozen=True)
class Recommendation:
    sweep: Sweep
    budget_mb: float | None
    min_accuracy: float | None
    candidates: list[Candidate]

    @property
    def picks(self) -> list[Candidate]:
        picked = [c for c in self.candidates if c.picked]
        return sorted(picked, key=lambda c: -(c.row.accuracy or 0.0))

    @property
    def excluded(self) -> list[Candidate]:
        return [c for c in self.candidates if not c.picked]


def _kv(run: LoadedRun, row: SweepRow) -> tuple[float | None, bool]:
    record = run.manifest.model(row.model)
    check = record.plan.memory_check if record.plan is not None else None
    kv = check.kv_bytes / MIB if check is not None and check.kv_bytes is not None else None
    info = runtime_info(record.backend)  # is the KV cache for n_ctx inside the peak RSS?
    return kv, info is not None and info.kv_at_load


def need_mb(row: SweepRow, kv_mb: float | None, kv_in_peak: bool) -> float | None:
    """Memory the variant needs at the run's context (module docstring)."""
    if row.peak_rss_mb is None:
        return None
    return row.peak_rss_mb if kv_in_peak else row.peak_rss_mb + (kv_mb or 0.0)


def _limits(
    row: SweepRow, need: float | None, budget_mb: float | None, floor: float | None, metric: str
) -> list[str]:
    reasons = []
    if need is None:
        reasons.append("no peak RSS measured: its memory is unknown")
    elif budget_mb is not None and need > budget_mb:
        reasons.append(f"over budget by {need - budget_mb:.0f} MiB (needs {need:.0f} MiB)")
    label = metric_label(metric)
    if row.accuracy is None:
        reasons.append(f"no {label} score")
    elif floor is not None and row.accuracy < floor:
        reasons.append(f"below min accuracy: {label} {row.accuracy:.3f} < {floor:g}")
    elif row.accuracy <= 0:  # the default floor: above 0
        reasons.append(f"scores 0: {label} {row.accuracy:.3f}")
    return reasons


_BEST = {
    "accuracy": "most accurate",
    "size_mb": "smallest file",
    "decode_tok_s": "fastest decode",
    "peak_rss_mb": "least memory",
}
_FIGURE = {"decode_tok_s": "decode speed", "peak_rss_mb": "memory", "size_mb": "file size"}


def _apart(row: SweepRow, others: list[SweepRow], objective: str) -> bool | None:
    """Whether `row`, best on the objective, is measurably apart from every other fitting
    row (module docstring); None: the others are the same (files of one size)."""
    mine = row.point().values[objective]
    assert mine is not None
    if objective == "decode_tok_s":
        interval = row.arm.result.perf.p50_ci95.get("decode_tok_s")
        if interval is None:
            return False
        tops = []  # each other's interval top; its p50 when it has no interval
        for other in others:
            their = other.arm.result.perf.p50_ci95.get("decode_tok_s")
            tops.append(their[1] if their else other.decode_tok_s)
        return all(top < interval[0] for top in tops if top is not None)
    values = [v for r in others if (v := r.point().values[objective]) is not None]
    if objective == "peak_rss_mb":
        return all(mine < v * (1 - MEMORY_NOISE) for v in values)
    if objective == "size_mb" and all(v == mine for v in values):
        return None
    return all(mine < v for v in values)


def _strengths(row: SweepRow, fitting: list[SweepRow]) -> tuple[str, ...]:
    """The objectives on which no fitting row beats it; a speed, memory or size lead
    only when measurable."""
    others = [r for r in fitting if r.key != row.key]
    if not others:  # best among one is no claim
        return ("the only one left",)
    found = []
    level = []
    for objective in OBJECTIVES:
        mine = row.point().values.get(objective.name)
        if mine is None:
            continue
        values = [v for r in fitting if (v := r.point().values.get(objective.name)) is not None]
        best = max(values) if objective.higher_is_better else min(values)
        if mine != best:
            continue
        apart = True if objective.name == "accuracy" else _apart(row, others, objective.name)
        if apart:
            found.append(_BEST[objective.name])
        elif apart is False:
            level.append(_FIGURE[objective.name])
    if level:
        found.append(f"no measurable difference in {', '.join(level)}")
    return tuple(found) or ("a trade-off no other fitting variant beats on all four",)


def recommend(
    run: LoadedRun,
    budget_bytes: int | None = None,
    min_accuracy: float | None = None,
    metric: str | None = None,
    arm: str | None = None,
) -> Recommendation:
    if min_accuracy is not None and not 0 <= min_accuracy <= 1:  # nan too
        raise UserError(f"--min-accuracy {min_accuracy:g}: must be between 0 and 1")
    if len(run.summary.models) < 1 or not run.summary.arms:
        raise UserError(f"{run.path}: the run has no variants to compare")
    sweep = build_sweep(run, metric, arm)
    budget_mb = budget_bytes / MIB if budget_bytes is not None else None
    checked = []
    for row in sweep.rows:
        kv, in_peak = _kv(run, row)
        need = need_mb(row, kv, in_peak)
        reasons = _limits(row, need, budget_mb, min_accuracy, sweep.metric)
        checked.append(Candidate(row, need, kv, in_peak, tuple(reasons)))
    fitting = [c.row for c in checked if c.picked]
    beaten = dominated_by([r.point() for r in fitting])
    candidates = []
    for c in checked:
        if not c.picked:
            candidates.append(c)
        elif by := beaten[c.row.key]:
            candidates.append(replace(c, reasons=(f"dominated by {', '.join(by)}",)))
        else:
            candidates.append(replace(c, strengths=_strengths(c.row, fitting)))
    return Recommendation(sweep, budget_mb, min_accuracy, candidates)


def device_verdict(need: float | None, device: Board) -> str:
    """ "fits", "tight" (less than 10% of usable memory left) or "no (+312 MiB)"."""
    if need is None:
        return "unknown"
    usable = device.usable_mb
    if need > usable:
        return f"no (+{need - usable:.0f} MiB)"
    return "tight" if usable - need < TIGHT_SHARE * usable else "fits"
