"""A fake `Waits` (runner/cooling.py): a wall clock that moves only when it is told to
or when something sleeps, every sleep recorded, and a thermometer reading a given
sequence of temperatures (its last one repeated)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from edgebench.runner.cooling import Waits

START = 1_790_000_000.0  # a unix time in 2026


@dataclass
class FakeTime:
    now: float = START
    sleeps: list[float] = field(default_factory=list)
    temperatures: Sequence[float | None] = (None,)
    sensor: str = "thermal_zone0 (x86_pkg_temp)"
    reads: int = 0
    # called before each sleep is counted (e.g. to raise KeyboardInterrupt)
    on_sleep: Callable[[int], None] | None = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        if self.on_sleep is not None:
            self.on_sleep(len(self.sleeps))
        self.sleeps.append(seconds)
        self.now += seconds

    def temperature(self) -> tuple[float | None, str | None]:
        value = self.temperatures[min(self.reads, len(self.temperatures) - 1)]
        self.reads += 1
        return value, None if value is None else self.sensor

    def waits(self) -> Waits:
        return Waits(clock=self.clock, sleep=self.sleep, temperature=self.temperature)
