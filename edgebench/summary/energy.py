"""Joules per example and per arm, and whether the machine throttled, from the run's
power readings (timeline.jsonl, or the --power-log rows copied into the folder) and each
example's wall-clock timestamps. Never guessed: a figure the readings do not cover is
None, with the reason.

Per example: energy from request start to first token is prefill, from first token to
end decode, each minus the idle baseline's watts over its own duration. Per arm: J per
prefill token (prompt tokens evaluated), per decode token (tokens after the first, as
decode tok/s counts them), per answer, per schema-compliant answer and per exact answer
(the arm's whole energy over the answers that pass: the cost of one good answer).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from edgebench.metrics.base import Family
from edgebench.runfolder.records import (
    ArmEnergy,
    PowerReading,
    PowerRecord,
    SampleRecord,
    TimelineRow,
    WallClock,
)
from edgebench.system.power import PowerCurve, PowerSample

# Pi get_throttled bits that mean the clock was held down (under-voltage alone is not).
_THROTTLE_NOW = ("freq_capped_now", "throttled_now", "soft_temp_limit_now")
_THROTTLE_OCCURRED = ("freq_capped_occurred", "throttled_occurred", "soft_temp_limit_occurred")


@dataclass(frozen=True)
class ExampleEnergy:
    """One example's joules, idle power subtracted."""

    prefill_j: float  # request start to first token
    decode_j: float  # first token to end

    @property
    def total_j(self) -> float:
        return self.prefill_j + self.decode_j


def power_samples(
    timeline: Sequence[TimelineRow], power_log: Sequence[PowerReading]
) -> list[PowerSample]:
    """The run's power readings in time order: the copied --power-log when there is one,
    else the timeline's."""
    rows: Sequence[TimelineRow | PowerReading] = power_log or timeline
    readings = [
        PowerSample(r.t, r.watts, r.joules)
        for r in rows
        if r.watts is not None or r.joules is not None
    ]
    return sorted(readings, key=lambda s: s.t)


def idle_watts(record: PowerRecord, power: PowerCurve) -> float | None:
    """Mean power over the idle baseline's window; None when not measured or covered."""
    start, end = record.idle_start, record.idle_end
    if start is None or end is None or end <= start:
        return None
    joules = power.energy(start, end)
    return joules / (end - start) if joules is not None else None


def example_energy(
    wall: WallClock, power: PowerCurve | Sequence[PowerSample], idle: float | None
) -> ExampleEnergy | None:
    """Prefill and decode joules of one example (None: the readings do not cover it)."""
    curve = power if isinstance(power, PowerCurve) else PowerCurve.of(power)
    first = wall.first_token if wall.first_token is not None else wall.end
    prefill = curve.energy(wall.start, first)
    decode = curve.energy(first, wall.end)
    if prefill is None or decode is None:
        return None
    base = idle or 0.0
    return ExampleEnergy(prefill - base * (first - wall.start), decode - base * (wall.end - first))


def _passes(sample: SampleRecord, family: str, score: str | None) -> bool:
    if score is None or sample.scores is None:
        return False
    return float(sample.scores.get(family, {}).get(score, 0.0)) >= 1.0


def _per(total: float, count: int) -> float | None:
    return total / count if count else None


def none_with(record: PowerRecord, reason: str | None, idle: float | None = None) -> ArmEnergy:
    """Every figure None, with why."""
    return ArmEnergy(
        source=record.source,
        tier=record.tier,
        resolution=record.resolution,
        idle_watts=idle,
        idle_seconds=_idle_seconds(record),
        j_per_prefill_token=None,
        j_per_decode_token=None,
        j_per_answer=None,
        j_per_compliant_answer=None,
        j_per_exact_answer=None,
        total_j=None,
        reason=reason,
    )


def _idle_seconds(record: PowerRecord) -> float | None:
    if record.idle_start is None or record.idle_end is None:
        return None
    return record.idle_end - record.idle_start


def arm_energy(
    record: PowerRecord | None,
    samples: Sequence[SampleRecord],
    power: PowerCurve,
    family: Family | None,
) -> ArmEnergy | None:
    """The energy figures of one arm's `samples` (None: a run made before format 2.7)."""
    if record is None:
        return None
    if record.reason is not None:
        return none_with(record, record.reason)
    if power.empty:
        return none_with(record, f"the power source ({record.source}) gave no reading")
    idle = idle_watts(record, power)
    measured = [
        (sample, energy)
        for sample in samples
        if sample.wall is not None
        and (energy := example_energy(sample.wall, power, idle)) is not None
    ]
    if not measured:
        reason = "no power readings cover the arm's examples"
        return none_with(record, reason if samples else "no example was decoded", idle)
    prefill = sum(e.prefill_j for _, e in measured)
    decode = sum(e.decode_j for _, e in measured)
    total = prefill + decode
    prefill_tokens = sum(s.prompt_tokens - s.cached_prompt_tokens for s, _ in measured)
    decode_tokens = sum(
        max(s.generated_tokens - s.forced_prefix_tokens - 1, 0) for s, _ in measured
    )
    name = family.name if family is not None else ""
    compliant = sum(_passes(s, name, family.schema_score if family else None) for s, _ in measured)
    exact = sum(_passes(s, name, family.exact_score if family else None) for s, _ in measured)
    return replace(
        none_with(record, None, idle),
        j_per_prefill_token=_per(prefill, prefill_tokens),
        j_per_decode_token=_per(decode, decode_tokens),
        j_per_answer=_per(total, len(measured)),
        j_per_compliant_answer=_per(total, compliant),
        j_per_exact_answer=_per(total, exact),
        total_j=total,
        prefill_j=prefill,
        decode_j=decode,
        n_measured=len(measured),
    )


def _span(samples: Sequence[SampleRecord]) -> tuple[float | None, float | None]:
    walls = [s.wall for s in samples if s.wall is not None]
    return min((w.start for w in walls), default=None), max((w.end for w in walls), default=None)


def lost_readings(
    rows: Sequence[TimelineRow | PowerReading], arm: str, samples: Sequence[SampleRecord]
) -> dict[str, int]:
    """The power readings lost while `arm` decoded, by reason: timeline rows tagged with
    the arm (or untagged within its examples' span), log lines within that span."""
    start, end = _span(samples)
    lost: Counter[str] = Counter()
    for row in rows:
        if row.lost is None:
            continue
        tag = row.arm if isinstance(row, TimelineRow) else None
        inside = start is not None and end is not None and start <= row.t <= end
        if tag == arm or (tag is None and inside):
            lost[row.lost] += row.lost_count if isinstance(row, PowerReading) else 1
    return dict(lost.most_common())


def with_losses(energy: ArmEnergy, lost: dict[str, int]) -> ArmEnergy:
    """The arm's energy marked partial when readings were lost while it decoded."""
    if not lost:
        return energy
    count = sum(lost.values())
    reasons = "; ".join(f"{reason} ({n})" for reason, n in lost.items())
    readings = "reading" if count == 1 else "readings"
    partial = f"{count} power {readings} lost while the arm decoded: {reasons}"
    return replace(energy, readings_lost=count, lost_reasons=lost, partial=partial)


def throttled(rows: Sequence[TimelineRow]) -> bool | None:
    """Whether the clock was held down during `rows`: a Raspberry Pi's "now" bit in any
    row, or an "occurred" bit that was clear in an earlier row and set later (set before
    the run, it says nothing of the run). None: no row carries throttling flags (only
    the Pi's firmware reports them)."""
    flagged = [row.throttled for row in rows if row.throttled is not None]
    if not flagged:
        return None
    if any(flags.get(bit) for flags in flagged for bit in _THROTTLE_NOW):
        return True
    first = flagged[0]
    return any(
        not first.get(bit) and any(flags.get(bit) for flags in flagged)
        for bit in _THROTTLE_OCCURRED
    )


def arm_throttled(
    rows: Sequence[TimelineRow], arm: str, samples: Sequence[SampleRecord]
) -> bool | None:
    """`throttled` over the rows taken while `arm` decoded (tagged with it, or within its
    examples' wall-clock span; an arm shorter than a row's interval: the first row after
    it), the row before them kept as the baseline of the "occurred" bits."""
    start, end = _span(samples)

    def during(row: TimelineRow) -> bool:
        inside = start is not None and end is not None and start <= row.t <= end
        return row.arm == arm or inside

    positions = [i for i, row in enumerate(rows) if during(row)]
    if not positions and end is not None:
        positions = [i for i, row in enumerate(rows) if row.t > end][:1]
    if not positions:
        return None
    return throttled(rows[max(positions[0] - 1, 0) : positions[-1] + 1])
