"""Who else used the CPU during a measured interval, from two snapshots of the system's
and this process's CPU times."""

from __future__ import annotations

import os
from collections import namedtuple

import pytest

from edgebench.system import cpu_share
from edgebench.system.cpu_share import (
    CONTENDED_SHARE,
    CpuMeter,
    CpuShare,
    CpuSnapshot,
    PsutilTimes,
    contended,
)

# psutil.cpu_times() on Linux: guest time is already inside user time.
Times = namedtuple("Times", "user nice system idle iowait irq softirq steal guest guest_nice")


def times(
    *,
    user: float = 0,
    system: float = 0,
    idle: float = 0,
    iowait: float = 0,
    steal: float = 0,
    guest: float = 0,
) -> Times:
    return Times(user, 0.0, system, idle, iowait, 0.0, 0.0, steal, guest, 0.0)


def snap(system: Times, own: float) -> CpuSnapshot:
    return CpuSnapshot(system._asdict(), {1: own})


ZERO = snap(times(), 0.0)


def test_others_are_the_busy_time_that_was_not_ours() -> None:
    # 100 s of all cores: 40 idle, 10 iowait, 10 steal; 40 busy, 15 of them ours.
    after = snap(times(user=30, system=10, idle=40, iowait=10, steal=10), 15.0)
    share = CpuMeter.share(ZERO, after)
    assert share.others == pytest.approx(25 / 100)
    assert share.steal == pytest.approx(10 / 100)


def test_guest_time_is_not_counted_twice() -> None:
    # guest is inside user: 50 busy of 100 (not of 150), all of it ours.
    after = snap(times(user=50, idle=50, guest=50), 50.0)
    assert CpuMeter.share(ZERO, after) == CpuShare(others=0.0, steal=0.0)


def test_coarse_ticks_never_give_a_share_below_zero() -> None:
    # Our own time read a tick more than the system's busy time: clamped to 0, not -0.1.
    after = snap(times(user=10, idle=90), 20.0)
    assert CpuMeter.share(ZERO, after).others == 0.0


def test_an_interval_without_ticks_is_not_measurable() -> None:
    snapshot = snap(times(user=5, idle=5), 1.0)
    assert CpuMeter.share(snapshot, snapshot) == CpuShare(others=None, steal=None)


def test_snapshots_read_this_machine_and_this_process() -> None:
    """Real counters: burning CPU here advances our own time and the system's total, so
    the interval is measurable."""
    meter = CpuMeter()
    before = meter.snapshot()
    after = before
    for _ in range(2000):  # until 50 ms of our CPU time have passed (at most seconds)
        sum(i * i for i in range(50_000))
        after = meter.snapshot()
        if sum(after.own.values()) - sum(before.own.values()) >= 0.05:
            break
    assert sum(after.own.values()) - sum(before.own.values()) >= 0.05
    share = meter.share(before, after)
    assert share.others is not None and share.steal is not None
    assert 0.0 <= share.others <= 1.0 and 0.0 <= share.steal <= 1.0


def test_our_own_time_comes_from_times_not_proc_stat(monkeypatch: pytest.MonkeyPatch) -> None:
    """qemu-user answers /proc/self/stat with zero CPU times: our own seconds are read
    with times(2), which it passes through; other processes' still through psutil."""
    fake = os.times_result((1.25, 0.5, 0.0, 0.0, 0.0))
    monkeypatch.setattr(cpu_share.os, "times", lambda: fake)
    monkeypatch.setattr(cpu_share.psutil, "Process", _ZeroProcess)
    source = PsutilTimes()
    assert source.process(os.getpid()) == pytest.approx(1.75)
    assert source.process(os.getpid() + 1) == 0.0


class _ZeroProcess:
    """A psutil.Process whose /proc/PID/stat reads as zero CPU time (as under qemu-user)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def cpu_times(self) -> object:
        return namedtuple("pcputimes", "user system")(0.0, 0.0)


def test_the_worker_counts_as_ours_and_its_seconds_are_its_own() -> None:
    # 100 s: 20 idle; 80 busy = 50 the worker's (pid 2) + 5 ours (pid 1) + 25 others'.
    before = CpuSnapshot(times()._asdict(), {1: 0.0, 2: 10.0})
    after = CpuSnapshot(times(user=80, idle=20)._asdict(), {1: 5.0, 2: 60.0})
    assert CpuMeter.share(before, after).others == pytest.approx(0.25)
    assert CpuMeter.seconds(before, after, 2) == pytest.approx(50.0)
    assert CpuMeter.seconds(before, after, 3) is None  # never read


def test_a_process_started_in_the_interval_counts_whole() -> None:
    before = CpuSnapshot(times()._asdict(), {1: 0.0})
    after = CpuSnapshot(times(user=50, idle=50)._asdict(), {1: 10.0, 7: 40.0})
    assert CpuMeter.share(before, after).others == 0.0


@pytest.mark.parametrize(
    ("others", "steal", "expected"),
    [
        (0.0, 0.0, False),
        (CONTENDED_SHARE, 0.0, False),  # at the threshold: still clean
        (CONTENDED_SHARE + 0.01, 0.0, True),
        (0.0, 0.2, True),  # stolen by the hypervisor
        (None, None, False),  # not measurable is not contended
    ],
)
def test_contended_is_either_share_over_the_one_threshold(
    others: float | None, steal: float | None, expected: bool
) -> None:
    assert contended(others, steal) is expected
    assert CpuShare(others, steal).contended is expected


def test_a_meter_reads_the_pids_it_is_given_from_its_source() -> None:
    class Source:
        def system(self) -> dict[str, float]:
            return {"user": 1.0, "idle": 1.0}

        def process(self, pid: int) -> float | None:
            return None if pid == 9 else float(pid)

    snapshot = CpuMeter(lambda: [3, 9, 3], Source()).snapshot()
    assert snapshot.own == {3: 3.0}  # a gone process is left out, a repeated pid read once
