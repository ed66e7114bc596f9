"""Who else used the CPU while we measured.

A speed figure is only clean when the model had the machine to itself. Around each
timed interval we read the system-wide CPU times and our own processes' (the process
that measures, and the model's worker when it runs in another): the busy time that was
not ours is other processes' (a desktop, an update, another benchmark), and `steal` is
time the hypervisor gave to other virtual machines. Both are shares of the machine's
total CPU time in the interval (all cores), so 0.25 on 2 cores means half a core went
elsewhere. The kernel counts in ticks (10 ms), so short intervals are coarse.

An interval is contended when either share is over `CONTENDED_SHARE`: `bench` and
`doctor` flag a row as not clean by it, `run` flags (and re-times) an example by it.
Where the times come from is a `CpuTimes` source: psutil here, fakes in tests.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import psutil

# The one threshold: more than 5% of all cores' time taken by others (or stolen by the
# hypervisor) during an interval makes its speed figure not clean.
CONTENDED_SHARE = 0.05

# guest time is already counted in user time on Linux
_NOT_IN_TOTAL = ("guest", "guest_nice")


class CpuTimes(Protocol):
    """Where CPU times come from: the machine's (seconds by state, summed over cores, as
    psutil.cpu_times) and one process's user + system seconds (None: it is gone)."""

    def system(self) -> Mapping[str, float]: ...
    def process(self, pid: int) -> float | None: ...


class PsutilTimes:
    """The real counters, through psutil (one Process object kept per pid)."""

    def __init__(self) -> None:
        self._processes: dict[int, psutil.Process] = {}

    def system(self) -> Mapping[str, float]:
        return psutil.cpu_times()._asdict()

    def process(self, pid: int) -> float | None:
        if pid == os.getpid():
            # times(2), not /proc/self/stat: qemu-user (an emulated Pi) fakes that file
            # with zero CPU times, which made all of our own work count as others'
            own = os.times()
            return own.user + own.system
        try:
            process = self._processes.get(pid) or psutil.Process(pid)
            self._processes[pid] = process
            times = process.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            self._processes.pop(pid, None)
            return None
        return times.user + times.system


@dataclass(frozen=True)
class CpuSnapshot:
    """The machine's CPU times and our processes' (pid -> seconds) at one moment."""

    system: Mapping[str, float]
    own: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CpuShare:
    """Shares of all cores' time during one interval; None when not measurable."""

    others: float | None
    steal: float | None

    @property
    def contended(self) -> bool:
        return contended(self.others, self.steal)


def contended(others: float | None, steal: float | None) -> bool:
    """Other processes or other virtual machines took more than CONTENDED_SHARE."""
    return any(v is not None and v > CONTENDED_SHARE for v in (others, steal))


def _total(times: Mapping[str, float]) -> float:
    return sum(v for k, v in times.items() if k not in _NOT_IN_TOTAL)


def this_process() -> list[int]:
    return [os.getpid()]


def process_tree() -> list[int]:
    """This process and every process it started (the model's workers)."""
    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        children = []
    return [os.getpid(), *(child.pid for child in children)]


class CpuMeter:
    """Snapshots before and after an interval; `share` compares two of them. `pids` says
    which processes are ours (default: this one)."""

    def __init__(
        self,
        pids: Callable[[], Iterable[int]] = this_process,
        source: CpuTimes | None = None,
    ) -> None:
        self.pids = pids
        self.source = source if source is not None else PsutilTimes()

    def snapshot(self) -> CpuSnapshot:
        system = dict(self.source.system())
        own: dict[int, float] = {}
        for pid in dict.fromkeys(self.pids()):
            seconds = self.source.process(pid)
            if seconds is not None:
                own[pid] = seconds
        return CpuSnapshot(system, own)

    @staticmethod
    def share(before: CpuSnapshot, after: CpuSnapshot) -> CpuShare:
        total = _total(after.system) - _total(before.system)
        if total <= 0:
            return CpuShare(others=None, steal=None)
        delta = {k: v - before.system.get(k, 0.0) for k, v in after.system.items()}
        idle = delta.get("idle", 0.0) + delta.get("iowait", 0.0)
        steal = delta.get("steal", 0.0)
        # a process started in the interval counts whole; one that ended is not known
        ours = sum(v - before.own.get(pid, 0.0) for pid, v in after.own.items())
        others = total - idle - steal - ours
        return CpuShare(others=min(max(others / total, 0.0), 1.0), steal=steal / total)

    @staticmethod
    def seconds(before: CpuSnapshot, after: CpuSnapshot, pid: int) -> float | None:
        """CPU seconds `pid` used in the interval (None: not read at both ends)."""
        if pid not in before.own or pid not in after.own:
            return None
        return max(after.own[pid] - before.own[pid], 0.0)
