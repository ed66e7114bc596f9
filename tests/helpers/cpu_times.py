"""Fake sources of CPU times (`system.cpu_share.CpuTimes`): a machine on which each
measured interval had the shares a test chooses, so contention is exact and the same on
any machine."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

# (others, steal): the shares of all cores' time in one interval
Shares = tuple[float, float]
CLEAN: Shares = (0.0, 0.0)
CONTENDED: Shares = (0.5, 0.0)  # half of all cores to other processes
STOLEN: Shares = (0.0, 0.3)  # a third to other virtual machines


class FakeCpuTimes:
    """Every read advances the machine by one second of all cores' time. Reads come in
    pairs around each measured interval (an arm's decode), so interval k is the advance of
    read 2k+1; its shares are `shares[k]`, the last one repeated (or `shares(k)`).
    Our own processes (this one: in-process workers) get the busy time that is not
    others', idle stays 10%."""

    def __init__(self, shares: Sequence[Shares] | Callable[[int], Shares] = (CLEAN,)) -> None:
        self._shares = shares
        self.reads = 0
        self.times = {"user": 0.0, "system": 0.0, "idle": 0.0, "steal": 0.0}
        self.own = 0.0

    def shares_of(self, interval: int) -> Shares:
        if callable(self._shares):
            return self._shares(interval)
        return self._shares[min(interval, len(self._shares) - 1)]

    def system(self) -> dict[str, float]:
        others, steal = self.shares_of(self.reads // 2)
        self.reads += 1
        ours = 0.9 - others - steal
        assert ours >= 0, "others + steal must leave the 10% idle"
        self.times["user"] += ours + others
        self.times["idle"] += 0.1
        self.times["steal"] += steal
        self.own += ours
        return dict(self.times)

    def process(self, pid: int) -> float | None:
        return self.own if pid == os.getpid() else None


def always(shares: Shares) -> Callable[[], FakeCpuTimes]:
    """A source factory (`RunEnvironment(cpu_times=...)`) whose every interval has `shares`."""
    return lambda: FakeCpuTimes([shares])


def scripted(shares: Sequence[Shares]) -> Callable[[], FakeCpuTimes]:
    """A factory of sources each starting the script again (one per arm)."""
    return lambda: FakeCpuTimes(list(shares))
