"""Peak memory of a worker process, sampled from outside it.

On Linux /proc/PID/status splits resident memory into anonymous pages (weights copied
into RAM, KV cache, Python heap) and file-backed pages (an mmapped model file), and
VmHWM is the kernel's own exact peak of the total. Elsewhere psutil's RSS is sampled.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

_MB = 1024 * 1024
_STATUS_FIELDS = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file", "VmHWM": "hwm"}


def read_status(pid: int, proc_root: Path = Path("/proc")) -> dict[str, int] | None:
    """Memory fields of /proc/PID/status in bytes, or None when unreadable."""
    try:
        text = (proc_root / str(pid) / "status").read_text()
    except OSError:
        return None
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in _STATUS_FIELDS:
            values[_STATUS_FIELDS[key]] = int(rest.split()[0]) * 1024  # given in kB
    return values or None


@dataclass
class MemoryPeak:
    """Peaks in MB; anon and file peaks are sampled and need not coincide in time."""

    peak_rss_mb: float = 0.0
    peak_rss_anon_mb: float | None = None
    peak_rss_file_mb: float | None = None
    samples: int = 0
    source: str = "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# How often to sample. With /proc the total peak is the kernel's own (VmHWM), exact at
# any pace, so twice a second suffices: the pace only sets how finely the anon/file split
# is caught (the worker's owner also samples after every request). Each reading of a busy
# worker's status costs 0.3-0.5 ms of CPU that the model's threads would otherwise have
# (measured on a 2-core VM; 10 readings a second added ~5 ms of CPU per second).
# Without /proc (psutil) the peak is only as good as the sampling.
PROC_INTERVAL_S = 0.5
PSUTIL_INTERVAL_S = 0.02


class MemorySampler:
    """Samples a process's resident memory on a background thread until stopped."""

    def __init__(self, pid: int, interval_s: float | None = None) -> None:
        self.pid = pid
        if interval_s is None:
            interval_s = PROC_INTERVAL_S if read_status(pid) is not None else PSUTIL_INTERVAL_S
        self.interval_s = interval_s
        self.peak = MemoryPeak()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memory-sampler", daemon=True)
        self._lock = threading.Lock()

    def start(self) -> MemorySampler:
        self.sample()
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        """Take one reading now (also called right before the worker exits)."""
        status = read_status(self.pid)
        with self._lock:
            if status is not None:
                self._update_from_status(status)
            else:
                self._update_from_psutil()

    def _update_from_status(self, status: dict[str, int]) -> None:
        peak = self.peak
        peak.source = "proc"
        peak.samples += 1
        total = max(status.get("rss", 0), status.get("hwm", 0))
        peak.peak_rss_mb = max(peak.peak_rss_mb, total / _MB)
        if "anon" in status:
            peak.peak_rss_anon_mb = max(peak.peak_rss_anon_mb or 0.0, status["anon"] / _MB)
        if "file" in status:
            peak.peak_rss_file_mb = max(peak.peak_rss_file_mb or 0.0, status["file"] / _MB)

    def _update_from_psutil(self) -> None:
        try:
            rss = psutil.Process(self.pid).memory_info().rss
        except (psutil.Error, OSError):
            return
        self.peak.source = "psutil"
        self.peak.samples += 1
        self.peak.peak_rss_mb = max(self.peak.peak_rss_mb, rss / _MB)

    def stop(self) -> MemoryPeak:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.peak
