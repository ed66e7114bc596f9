"""Memory readings of a process: /proc/PID/status split into anonymous and file-backed
pages, the kernel's own peak (VmHWM), and how often the sampler reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edgebench.system import memory
from edgebench.system.memory import MemorySampler, read_status

STATUS = """Name:\tpython
VmHWM:\t  204800 kB
VmRSS:\t  102400 kB
RssAnon:\t   40960 kB
RssFile:\t   61440 kB
"""
MB = 2**20


def test_read_status_splits_anon_and_file(tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "status").write_text(STATUS)
    values = read_status(42, proc_root=tmp_path)
    assert values == {"hwm": 200 * MB, "rss": 100 * MB, "anon": 40 * MB, "file": 60 * MB}
    assert read_status(43, proc_root=tmp_path) is None


def test_sampler_reports_own_process_peak() -> None:
    sampler = MemorySampler(os.getpid()).start()
    ballast = bytearray(64 * MB)  # touch 64 MB
    ballast[::4096] = b"x" * len(ballast[::4096])
    sampler.sample()
    peak = sampler.stop()
    assert peak.peak_rss_mb >= 64
    if peak.source == "proc":
        assert peak.peak_rss_anon_mb is not None and peak.peak_rss_anon_mb >= 64


def test_peaks_are_the_largest_reading_of_each_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The total is the larger of VmRSS and VmHWM (the kernel's exact peak, which a
    sampler between readings would miss); anon and file peaks are kept apart."""
    readings = iter(
        [
            {"rss": 100 * MB, "hwm": 150 * MB, "anon": 30 * MB, "file": 70 * MB},
            {"rss": 120 * MB, "hwm": 150 * MB, "anon": 90 * MB, "file": 30 * MB},
            {"rss": 80 * MB, "anon": 10 * MB},
        ]
    )
    sampler = MemorySampler(os.getpid(), interval_s=3600)  # no background readings
    monkeypatch.setattr(memory, "read_status", lambda pid: next(readings))
    for _ in range(3):
        sampler.sample()
    peak = sampler.stop()
    assert (peak.peak_rss_mb, peak.peak_rss_anon_mb, peak.peak_rss_file_mb) == (150, 90, 70)
    assert peak.samples == 3 and peak.source == "proc"


def test_without_proc_psutil_is_sampled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "read_status", lambda pid: None)
    sampler = MemorySampler(os.getpid(), interval_s=3600)
    sampler.sample()
    peak = sampler.stop()
    assert peak.source == "psutil" and peak.peak_rss_mb > 5
    assert peak.peak_rss_anon_mb is None and peak.peak_rss_file_mb is None


def test_sampler_paces_itself_by_what_it_can_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """With /proc (VmHWM, the exact peak) it samples slowly; with psutil only, often."""
    monkeypatch.setattr(memory, "read_status", lambda pid: {"hwm": 1})
    assert MemorySampler(os.getpid()).interval_s == memory.PROC_INTERVAL_S
    monkeypatch.setattr(memory, "read_status", lambda pid: None)
    assert MemorySampler(os.getpid()).interval_s == memory.PSUTIL_INTERVAL_S
    assert memory.PSUTIL_INTERVAL_S < memory.PROC_INTERVAL_S
