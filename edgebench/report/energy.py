"""What compare, cards and reports say about energy and heat: the energy columns (shown
only when some arm was measured), the one line saying why when none was, the source
line, and the throttling flag."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from edgebench.runfolder.records import ArmEnergy, ArmSummary

Figure = Callable[[ArmSummary], Any]


def _energy(name: str) -> Figure:
    def read(arm: ArmSummary) -> Any:
        return getattr(arm.energy, name) if arm.energy is not None else None

    return read


# (label, key, read, digits): per arm, idle power subtracted; lower is better for all.
ENERGY_COLUMNS: tuple[tuple[str, str, Figure, int], ...] = (
    ("J/prefill tok", "energy.j_per_prefill_token", _energy("j_per_prefill_token"), 4),
    ("J/decode tok", "energy.j_per_decode_token", _energy("j_per_decode_token"), 4),
    ("J/answer", "energy.j_per_answer", _energy("j_per_answer"), 2),
    ("J/compliant", "energy.j_per_compliant_answer", _energy("j_per_compliant_answer"), 2),
    ("J/exact", "energy.j_per_exact_answer", _energy("j_per_exact_answer"), 2),
    ("total J", "energy.total_j", _energy("total_j"), 1),
)
THROTTLED = ("throttled", "throttled_during_run", lambda a: a.throttled_during_run, 0)
CAPTION = (
    "J: joules, idle power subtracted; J/prefill tok over the prompt tokens evaluated, "
    "J/decode tok over the tokens after the first; J/answer, J/compliant, J/exact: the "
    "arm's energy over its answers, its schema-compliant answers, its exact answers."
)


def measured(arms: Sequence[ArmSummary]) -> bool:
    """Some arm has energy figures."""
    return any(a.energy is not None and a.energy.total_j is not None for a in arms)


def throttle_known(arms: Sequence[ArmSummary]) -> bool:
    return any(a.throttled_during_run is not None for a in arms)


def _records(arms: Sequence[ArmSummary]) -> list[ArmEnergy]:
    return [a.energy for a in arms if a.energy is not None]


def not_measured(arms: Sequence[ArmSummary]) -> str | None:
    """The one line saying why no energy is shown; None when some was measured or the
    runs predate energy (format < 2.7)."""
    records = _records(arms)
    if not records or measured(arms):
        return None
    reasons = "; ".join(dict.fromkeys(r.reason or "no reading" for r in records))
    return f"energy: not measured ({reasons})"


def source_line(arms: Sequence[ArmSummary]) -> str | None:
    """Where the joules came from: source, tier, resolution and the idle baseline."""
    records = [r for r in _records(arms) if r.total_j is not None]
    if not records:
        return None
    parts = []
    for r in {
        (r.source, r.tier, r.resolution, r.idle_watts, r.idle_seconds): r for r in records
    }.values():
        idle = (
            f"idle {r.idle_watts:.2f} W over {r.idle_seconds:.0f} s subtracted"
            if r.idle_watts is not None and r.idle_seconds is not None
            else "no idle baseline subtracted"
        )
        parts.append(f"{r.source} ({r.tier}; {r.resolution}); {idle}")
    return "energy: " + " · ".join(parts) + _lost(records)


def _lost(records: Sequence[ArmEnergy]) -> str:
    """What the figures lack: the readings lost while the arms decoded, by reason."""
    lost: dict[str, int] = {}
    for record in records:
        for reason, count in record.lost_reasons.items():
            lost[reason] = lost.get(reason, 0) + count
    if not lost:
        return ""
    reasons = "; ".join(f"{reason} ({count})" for reason, count in lost.items())
    return f" · partial: {sum(lost.values())} readings lost ({reasons})"


def throttle_text(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "—"}[value]
