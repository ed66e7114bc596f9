"""Who else used the CPU while we measured.

A speed figure is only clean when the model had the machine to itself. Around each
timed interval we read the system-wide CPU times and this process's own: the busy time
that was not ours is other processes' (a desktop, an update, another benchmark), and
`steal` is time the hypervisor gave to other virtual machines. Both are shares of the
machine's total CPU time in the interval (all cores), so 0.25 on 2 cores means half a
core went elsewhere. The kernel counts in ticks (10 ms), so short intervals are coarse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psutil

# guest time is already counted in user time on Linux
_NOT_IN_TOTAL = ("guest", "guest_nice")


@dataclass(frozen=True)
class CpuShare:
    """Shares of all cores' time during one interval; None when not measurable."""

    others: float | None
    steal: float | None


def _total(times: Any) -> float:
    return sum(v for k, v in times._asdict().items() if k not in _NOT_IN_TOTAL)


class CpuMeter:
    """Snapshots before and after an interval; `share` compares two of them."""

    def __init__(self) -> None:
        self._process = psutil.Process()

    def snapshot(self) -> tuple[Any, float]:
        own = self._process.cpu_times()
        return psutil.cpu_times(), own.user + own.system

    @staticmethod
    def share(before: tuple[Any, float], after: tuple[Any, float]) -> CpuShare:
        (sys_a, own_a), (sys_b, own_b) = before, after
        total = _total(sys_b) - _total(sys_a)
        if total <= 0:
            return CpuShare(others=None, steal=None)
        delta = {k: getattr(sys_b, k) - getattr(sys_a, k) for k in sys_b._fields}
        idle = delta.get("idle", 0.0) + delta.get("iowait", 0.0)
        steal = delta.get("steal", 0.0)
        others = total - idle - steal - (own_b - own_a)
        return CpuShare(others=min(max(others / total, 0.0), 1.0), steal=steal / total)
