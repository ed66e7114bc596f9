"""Fake power sources implementing `edgebench.system.power.PowerSource`: a known function
of time, read on a clock a test chooses, so the energy a run reports can be checked
against the integral of that function."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from edgebench.system.power import PowerChoice, PowerSample

Watts = Callable[[float], float]


@dataclass
class FakePower:
    """Power `watts(t)` read at `clock()`; `counter`: a cumulative joule counter instead
    (the exact integral of `watts` from `t0`, as RAPL counts)."""

    watts: Watts
    clock: Callable[[], float] = time.time
    counter: Callable[[float], float] | None = None
    name: str = "fake-meter"
    tier: str = "external"
    resolution: str = "exact readings of a test's function"
    covers: str = "a function of time"
    reads: list[float] = field(default_factory=list)

    def read(self) -> PowerSample | None:
        t = self.clock()
        self.reads.append(t)
        if self.counter is not None:
            return PowerSample(t, None, self.counter(t))
        return PowerSample(t, self.watts(t), None)

    def choice(self) -> PowerChoice:
        return PowerChoice(self, None, None)


def wave(t0: float, base: float = 6.0, swing: float = 3.0, period: float = 30.0) -> Watts:
    """A smooth, non-linear power draw around `base` watts."""
    return lambda t: base + swing * math.sin(2 * math.pi * (t - t0) / period)


def wave_integral(
    t0: float, base: float = 6.0, swing: float = 3.0, period: float = 30.0
) -> Callable[[float, float], float]:
    """The exact joules of `wave` over [a, b]."""
    k = 2 * math.pi / period

    def joules(a: float, b: float) -> float:
        return base * (b - a) - swing / k * (math.cos(k * (b - t0)) - math.cos(k * (a - t0)))

    return joules
