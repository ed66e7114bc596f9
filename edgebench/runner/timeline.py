"""timeline.jsonl: heat, clocks and power once a second while a run decodes.

A thread of the orchestrating process (never the model worker), at the lowest CPU
priority, so the sampling takes no core from llama.cpp's threads: it sleeps on an Event
between rows, reads a few /sys files (and the power source) and appends one flushed line
(fsynced every FSYNC_EVERY rows). Each row names the arm and example being decoded, so a
row can be tied to what caused it, and the CPU shares other processes and other virtual
machines took since the previous row (as a sample's `cpu`; the run's own processes, this
one and its workers, are ours), so a plot shows when contention happened. A resumed
run appends after the earlier sessions' complete rows (a torn last line is dropped).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgebench.io import JsonlAppender, write_jsonl_atomic
from edgebench.runfolder.read import TIMELINE, read_rows
from edgebench.runfolder.records import TimelineRow
from edgebench.system.cpu_share import CpuMeter, CpuShare, CpuSnapshot, process_tree
from edgebench.system.heat import heat_sample
from edgebench.system.power import PowerSample, PowerSource, ReadingLost
from edgebench.system.power.sample import MAX_WATTS

INTERVAL_S = 1.0
# rows between fsyncs: every row is flushed (a crash of edgebench loses none), the disk
# is synced every 10 s (a power cut loses at most that), not every second
FSYNC_EVERY = 10
# the sampler thread's nice value: a model thread it would preempt stalls the others
NICE = 19

# a lost reading's reason is kept to this many characters in its row
_REASON_CHARS = 200

HeatReader = Callable[[], dict[str, Any]]


class Timeline:
    """The sampler: `start()` a thread writing a row every `interval` seconds on `clock`
    (time.time), `stop()` it with a last row. `wait` sleeps until the next row or a stop
    (tests pass a fake that advances a fake clock instead of sleeping)."""

    def __init__(
        self,
        run_dir: Path,
        source: PowerSource | None,
        *,
        interval: float = INTERVAL_S,
        clock: Callable[[], float] = time.time,
        heat: HeatReader = heat_sample,
        wait: Callable[[float], bool] | None = None,
        cpu: CpuMeter | None = None,
    ) -> None:
        self.path = run_dir / TIMELINE
        self.source = source
        self.interval = interval
        self.clock = clock
        self.heat = heat
        self.cpu = cpu if cpu is not None else CpuMeter(process_tree)
        self._cpu_last: CpuSnapshot | None = None
        self._stop = threading.Event()
        self.wait = wait or self._stop.wait
        self.arm: str | None = None
        self.example: str | None = None
        self._lock = threading.Lock()  # one row at a time: the thread and `sample`
        self._log: JsonlAppender | None = None
        self._thread: threading.Thread | None = None
        self.rows = 0  # rows this session wrote
        self.error: str | None = None  # why the thread stopped early
        self.lost: Counter[str] = Counter()  # power readings lost this session, by reason

    def open(self, resumed: bool) -> None:
        """Open the file for appending; a resumed run keeps its complete rows only, so
        appends never follow a torn line."""
        if resumed and self.path.is_file():
            kept = read_rows(self.path.parent, TIMELINE, TimelineRow)
            write_jsonl_atomic(self.path, [row.to_json() for row in kept])
        self._log = JsonlAppender(self.path, fsync_every=FSYNC_EVERY)

    def at(self, arm: str | None, example: str | None) -> None:
        """What the run is decoding now (None, None: between arms, or idle)."""
        self.arm, self.example = arm, example

    def _heat(self) -> dict[str, Any]:
        try:
            heat = self.heat()
        except Exception:  # a sensor's failure is a row without heat
            return {}
        return heat if isinstance(heat, dict) else {}

    def _reading(self) -> tuple[PowerSample | None, str | None]:
        """The source's reading now, or why it was lost: whatever the source does
        (garbage, a hang, an exception of its own) costs this reading, never the run."""
        if self.source is None:
            return None, None
        try:
            reading = self.source.read()
        except ReadingLost as lost:
            return None, lost.reason[:_REASON_CHARS]
        except Exception as exc:  # a broken source is a lost reading
            return None, f"the source raised {type(exc).__name__}"
        if reading is None:
            return None, "no reading"
        return _checked(reading)

    def sample(self) -> TimelineRow:
        """One row now, appended."""
        with self._lock:
            heat = self._heat()
            share = self._cpu_share()
            reading, lost = self._reading()
            if lost is not None:
                self.lost[lost] += 1
            row = TimelineRow(
                # the source's own reading time when it has one, else ours
                t=reading.t if reading is not None else self.clock(),
                temp_c=heat.get("temp_c"),
                freq_mhz=list(heat.get("freq_mhz") or []),
                throttled=heat.get("throttled"),
                watts=reading.watts if reading is not None else None,
                joules=reading.joules if reading is not None else None,
                arm=self.arm,
                example=self.example,
                others_share=None if share.others is None else round(share.others, 4),
                steal_share=None if share.steal is None else round(share.steal, 4),
                lost=lost,
            )
            assert self._log is not None
            self._log.append(row.to_json())
            self.rows += 1
            return row

    def _cpu_share(self) -> CpuShare:
        """The shares since the previous row (none for the first, or when the CPU times
        cannot be read: a process gone between two reads costs the row its shares)."""
        try:
            snapshot = self.cpu.snapshot()
        except Exception:
            self._cpu_last = None
            return CpuShare(None, None)
        last, self._cpu_last = self._cpu_last, snapshot
        if last is None:
            return CpuShare(None, None)
        return self.cpu.share(last, snapshot)

    def loop(self) -> None:
        """Rows on a fixed schedule (no drift: the next row is due `interval` after the
        last was due, not after it was written) until `stop`."""
        _lower_priority()
        due = self.clock()
        while True:
            try:
                self.sample()
            except OSError as exc:  # a full disk: the run's own writes will stop it
                self.error = f"timeline.jsonl: {exc.strerror or exc}"
                return
            except Exception as exc:  # the thread never dies of a row
                self.error = f"timeline.jsonl: a row was lost ({type(exc).__name__})"
            due += self.interval
            if self.wait(max(due - self.clock(), 0.0)):
                return

    def start(self) -> None:
        self._thread = threading.Thread(target=self.loop, name="edgebench-timeline", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread, then a last row, so the readings reach past the last example."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._log is not None:
            log = self._log
            for step in (self.sample, log.close):
                try:
                    step()
                except OSError as exc:  # a full disk: the run's own writes report it
                    self.error = f"timeline.jsonl: {exc.strerror or exc}"
            self._log = None


def _checked(reading: PowerSample) -> tuple[PowerSample | None, str | None]:
    """A reading whose numbers can be summed: finite, watts >= 0 (a sensor's garbage, an
    INA reader's sign or a 1e999 from a PMIC line is a reading lost, not an energy of
    infinity, nor one of 1e308 W that makes every figure NaN); else why it was lost."""
    watts, joules = reading.watts, reading.joules
    if watts is not None and not (isinstance(watts, int | float) and math.isfinite(watts)):
        return None, "gave watts that are not a number"
    if watts is not None and watts < 0:
        return None, "gave negative watts"
    if watts is not None and watts > MAX_WATTS:
        return None, f"gave watts over {MAX_WATTS:g} W"
    if joules is not None and not (isinstance(joules, int | float) and math.isfinite(joules)):
        return None, "gave an energy that is not a number"
    if not (isinstance(reading.t, int | float) and math.isfinite(reading.t)):
        return None, "gave a time that is not a number"
    return reading, None


def lost_note(lost: Counter[str]) -> str | None:
    """The readings a session lost, in one line for the terminal; None: none."""
    if not lost:
        return None
    reasons = "; ".join(f"{reason} ({count})" for reason, count in lost.most_common())
    return f"power: {lost.total()} readings lost, the energy is partial: {reasons}"


def _lower_priority() -> None:
    """This thread at the lowest CPU priority (Linux threads have their own nice value),
    so it never takes a core from a model thread that is ready to run."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
