"""An arm's peak memory in summary.json: what its workers' memory readings gave, and no
figure at all (never 0 MB) when no reading could be taken (a worker whose /proc entry is
not this process's to read, such as a PID namespace without its own /proc)."""

from __future__ import annotations

from dataclasses import replace

from edgebench.runfolder.read import read_manifest, read_samples
from edgebench.runfolder.records import MemoryRecord
from edgebench.summary.perf import perf_summary
from tests.helpers.run_fake import RunFake


def test_an_arm_whose_memory_was_never_read_has_no_peak(run_fake: RunFake) -> None:
    run_dir = run_fake(['{"a": 1}'] * 2, n=2).run_dir
    arm = read_manifest(run_dir).arms[0]
    samples, _ = read_samples(run_dir)
    read = replace(arm, memory=MemoryRecord(212.5, 100.0, 112.5, samples=4, source="proc"))
    assert perf_summary(samples, read).peak_rss_mb == 212.5
    unread = replace(arm, memory=MemoryRecord(0.0, None, None, samples=0, source="none"))
    perf = perf_summary(samples, unread)
    assert perf.peak_rss_mb is None and perf.peak_rss_anon_mb is None
