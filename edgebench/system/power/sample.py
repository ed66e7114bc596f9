"""What every power source gives: timed samples of watts or of a cumulative energy
counter, and the description the run record carries (name, tier, resolution, coverage)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from edgebench.system.tree import SystemTree

# A reading above this is no device's draw but a meter's garbage (1e308 W would make
# every energy figure infinite or NaN): a megawatt, far above any machine edgebench runs on.
MAX_WATTS = 1e6


def plausible_watts(watts: float) -> bool:
    """Watts a reading may hold: a finite number from 0 to MAX_WATTS."""
    return math.isfinite(watts) and 0 <= watts <= MAX_WATTS


@dataclass(frozen=True)
class PowerSample:
    t: float  # time.time() seconds: the wall clock of the run's own timestamps
    watts: float | None  # instantaneous power, when the source gives power
    joules: float | None  # cumulative energy, monotonic, counter wrap corrected


class ReadingLost(Exception):
    """One reading failed, with why in a few words that do not vary between polls (they
    are counted by reason): a gap in the timeline, never the end of the run. `detail`
    adds what the source said, for a one-line error when the first reading fails."""

    def __init__(self, reason: str, detail: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail or reason

    def __str__(self) -> str:
        return self.reason


class PowerSource(Protocol):
    name: str  # "rapl", "pi5-pmic", "battery:BAT0", "hwmon:<chip>", "command"
    tier: str  # "board-pmic" | "rapl" | "battery" | "hwmon" | "external"
    resolution: str  # what one reading resolves, in words
    covers: str  # what it measures and what it misses

    def read(self) -> PowerSample | None:
        """One reading now; None (or ReadingLost with why) when this reading failed: a
        gap in the timeline."""
        ...


@dataclass(frozen=True)
class PowerChoice:
    source: PowerSource | None  # a live source to poll
    log: Path | None  # --power-log FILE: the samples come from the file after the run
    reason: str | None  # nothing readable: why, one clause per tier tried


# A tier's probe: its source, or why it has none (one clause of PowerChoice.reason).
Probe = tuple[PowerSource | None, str]


class EnergyCounter:
    """Joules since the first reading of a hardware counter in microjoules.

    `wrap_uj` is where the counter wraps to 0 (RAPL's max_energy_range_uj): a reading
    below the last one then adds the distance to the wrap. Without a wrap point a drop is
    a reset: that reading is a gap and counting goes on from it."""

    def __init__(self, wrap_uj: int | None) -> None:
        self.wrap_uj = wrap_uj
        self.last_uj: int | None = None
        self.total_uj = 0

    def update(self, raw_uj: int) -> float | None:
        if self.last_uj is not None:
            delta = raw_uj - self.last_uj
            if delta < 0:
                if self.wrap_uj is None:
                    self.last_uj = raw_uj
                    return None
                delta += self.wrap_uj
            self.total_uj += delta
        self.last_uj = raw_uj
        return self.total_uj / 1e6


def read_counters(
    tree: SystemTree, counters: list[tuple[str, EnergyCounter]]
) -> PowerSample | None:
    """One reading of energy counter files (path, its counter): the joules of all of them
    summed; None when one is unreadable or was reset."""
    try:
        raws = [int(tree.read(path)) for path, _ in counters]
        totals = [counter.update(raw) for (_, counter), raw in zip(counters, raws, strict=True)]
    except (OSError, ValueError, OverflowError):  # OverflowError: a counter past a float
        return None
    if any(total is None for total in totals):
        return None
    return PowerSample(t=time.time(), watts=None, joules=sum(total or 0.0 for total in totals))
