"""Waiting on the machine, apart from every timing: `--wait-cool` (before the start, until
the CPU is below a temperature) and the pauses of `--cooldown`/`--delay`.

The clock, the sleep and the thermometer come in a `Waits`, so tests run a ten-minute
wait in milliseconds with a fake temperature sequence.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from edgebench.runfolder.records import WaitCool
from edgebench.system.device import cpu_temperature
from edgebench.system.tree import ROOT, SystemTree

# How often the temperature is read (and the progress line printed) while waiting.
POLL_S = 5.0

Reading = tuple[float | None, str | None]  # (°C, where it was read), as cpu_temperature


def machine_temperature(root: Path = ROOT) -> Reading:
    """The CPU temperature now: a CPU/SoC thermal zone, else a CPU hwmon sensor."""
    return cpu_temperature(SystemTree(root))


@dataclass(frozen=True)
class Waits:
    """The wall clock, the sleep and the thermometer that waits and pauses use."""

    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    temperature: Callable[[], Reading] = field(default=machine_temperature)

    def pause(self, seconds: float) -> float:
        """Sleep `seconds` (Ctrl-C ends it with KeyboardInterrupt); the seconds it took."""
        if seconds <= 0:
            return 0.0
        start = self.clock()
        self.sleep(seconds)
        return self.clock() - start


def wait_until_cool(
    target_c: float,
    timeout_s: float,
    waits: Waits,
    say: Callable[[str], None],
    poll_s: float = POLL_S,
) -> WaitCool:
    """Wait until the CPU is below `target_c` °C, at most `timeout_s` seconds, saying how
    it goes every `poll_s` seconds. Never refuses to start: with no temperature readable,
    or still too hot when the time is up, it says so in one line and returns."""
    start = waits.clock()
    first, sensor = waits.temperature()
    if first is None:
        message = (
            f"--wait-cool {target_c:g}: no CPU temperature is readable here (no CPU thermal "
            "zone or hwmon sensor); starting without waiting"
        )
        say(message)
        return WaitCool(target_c, timeout_s, "unreadable", 0.0, None, None, None, message)
    if first < target_c:
        message = f"CPU at {first:.1f} °C, below {target_c:g} °C: starting"
        say(message)
        return WaitCool(target_c, timeout_s, "already", 0.0, first, first, sensor, message)
    current: float | None = first
    while True:
        waited = waits.clock() - start
        if current is not None and current < target_c:
            message = f"CPU cooled to {current:.1f} °C (below {target_c:g} °C) in {waited:.0f} s"
            say(message)
            return WaitCool(target_c, timeout_s, "cooled", waited, first, current, sensor, message)
        if waited >= timeout_s:
            shown = "unreadable" if current is None else f"{current:.1f} °C"
            message = (
                f"--wait-cool {target_c:g}: the CPU is still at {shown} after {waited:.0f} s "
                f"(--wait-cool-timeout {timeout_s:g}); starting anyway"
            )
            say(message)
            return WaitCool(target_c, timeout_s, "timeout", waited, first, current, sensor, message)
        shown = "unreadable" if current is None else f"{current:.1f} °C"
        say(
            f"waiting for the CPU to cool below {target_c:g} °C: {shown} ({sensor}), "
            f"{waited:.0f} of at most {timeout_s:g} s"
        )
        waits.sleep(min(poll_s, max(timeout_s - waited, 0.0)))
        current = waits.temperature()[0]
