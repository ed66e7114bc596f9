"""The run's power: which source (`system.power`), the options' checks, the idle
baseline before the first arm, and the --power-log rows copied into the run folder so
the folder alone gives its energy (the log may move or grow after the run)."""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from edgebench.errors import UserError
from edgebench.io import write_jsonl_atomic
from edgebench.runfolder.read import POWER_LOG, read_rows
from edgebench.runfolder.records import PowerReading, PowerRecord, RunSettings, SampleRecord
from edgebench.runner.timeline import INTERVAL_S, Timeline
from edgebench.system.power import PowerChoice, choose_power_source
from edgebench.system.power.command import command_argv
from edgebench.system.power.meter_log import BadLine, check_power_log, scan_power_log

LOG_SOURCE = "log"
LOG_TIER = "external"
LOG_RESOLUTION = "the log's own rows (its meter's resolution and rate)"
LOG_COVERS = "what the meter measures: the whole device at its plug or USB port"
# the log rows kept around the run's examples and idle window, seconds
LOG_MARGIN_S = 5.0
# the longest idle baseline, seconds: an hour settles any device
MAX_IDLE_S = 3600.0


def check_power_settings(settings: RunSettings) -> None:
    """The power options' mistakes, as one line each, before a run folder is made."""
    if settings.power_command is not None and settings.power_log is not None:
        raise UserError("give one power meter: --power-command or --power-log, not both")
    if settings.power_command is not None:
        if not settings.power_command.strip():
            raise UserError("--power-command: empty command")
        command_argv(settings.power_command)  # shell syntax, bad quotes: one line, now
    idle = settings.idle_baseline
    if not math.isfinite(idle) or idle < 0:
        raise UserError(f"--idle-baseline: {idle} is not a number of seconds >= 0")
    if idle > MAX_IDLE_S:  # 1e9 would wait 31 years before the first model loads
        raise UserError(
            f"--idle-baseline: {idle:g} s is more than the {MAX_IDLE_S:g} s an idle "
            "baseline may take"
        )
    log = settings.power_log
    if log is not None:
        if not os.path.lexists(log):  # a FIFO or a device is there: _open names it
            raise UserError(f"--power-log: no such file: {log}")
        check_power_log(log)  # a bad first row is a one-line error naming file:line, now


def choose(settings: RunSettings) -> PowerChoice:
    return choose_power_source(command=settings.power_command, log=settings.power_log)


def power_record(
    choice: PowerChoice, settings: RunSettings, stored: PowerRecord | None
) -> PowerRecord:
    """What the manifest says of the run's power; a resumed run keeps its idle window."""
    idle = {"idle_start": stored.idle_start, "idle_end": stored.idle_end} if stored else {}
    common = {"timeline": settings.timeline, "interval_s": INTERVAL_S, **idle}
    if choice.log is not None:
        return PowerRecord(LOG_SOURCE, LOG_TIER, LOG_RESOLUTION, LOG_COVERS, reason=None, **common)
    source = choice.source
    if source is None:
        return PowerRecord(None, None, None, None, reason=choice.reason, **common)
    reason = None if settings.timeline else "--no-timeline: the power source was not sampled"
    return PowerRecord(
        source.name, source.tier, source.resolution, source.covers, reason=reason, **common
    )


def measure_idle(
    record: PowerRecord,
    seconds: float,
    timeline: Timeline | None,
    sleep: Callable[[float], None] = time.sleep,
) -> PowerRecord:
    """The idle window: `seconds` with no model running, before the first arm, with a
    reading at each end (the timeline samples in between)."""
    start = timeline.sample().t if timeline is not None else time.time()
    sleep(seconds)
    end = timeline.sample().t if timeline is not None else time.time()
    return replace(record, idle_start=start, idle_end=end)


def needs_idle(record: PowerRecord, settings: RunSettings) -> bool:
    """Measure the idle baseline now: asked for, something to measure, not yet done."""
    measurable = record.reason is None and record.source is not None
    return settings.idle_baseline > 0 and measurable and record.idle_start is None


def copy_power_log(
    log: Path, run_dir: Path, record: PowerRecord, samples: Sequence[SampleRecord]
) -> int:
    """The log's rows around the run's examples and idle window into power-log.jsonl,
    added to the rows an earlier session copied; the number of lines lost near them.

    The log is read once, as a stream: only the rows of the window are kept. A line that
    cannot be read is a row with watts None and why (`lost`, counted by reason), placed
    at the last good row before it (clamped into the window)."""
    bounds = [s.wall.start for s in samples if s.wall] + [s.wall.end for s in samples if s.wall]
    bounds += [t for t in (record.idle_start, record.idle_end) if t is not None]
    kept = {(r.t, r.lost): r for r in read_rows(run_dir, POWER_LOG, PowerReading)}
    lost_here = 0
    if bounds:
        low, high = min(bounds) - LOG_MARGIN_S, max(bounds) + LOG_MARGIN_S
        before: float | None = None  # the last good row's time
        pending: Counter[str] = Counter()  # bad lines since it, by reason

        def place(after: float | None) -> None:
            nonlocal lost_here
            at = _placed(before, after, low, high)
            if at is not None:
                for reason, count in pending.items():
                    kept[at, reason] = PowerReading(at, None, lost=reason, lost_count=count)
                    lost_here += count
            pending.clear()

        for row in scan_power_log(log):
            if isinstance(row, BadLine):
                pending[row.reason] += 1
                continue
            if pending:
                place(row.t)
            if low <= row.t <= high:
                kept[row.t, None] = PowerReading(row.t, row.watts, row.joules)
            before = row.t
        if pending:
            place(None)
    rows = [kept[key].to_json() for key in sorted(kept, key=lambda key: (key[0], key[1] or ""))]
    write_jsonl_atomic(run_dir / POWER_LOG, rows)
    return lost_here


def _placed(before: float | None, after: float | None, low: float, high: float) -> float | None:
    """Where lines lost between two good rows (None: the log's start or end) go: into
    the window [low, high] when the span between the rows reaches it, else nowhere."""
    start = before if before is not None else after
    end = after if after is not None else math.inf
    if start is None or end < low or start > high:
        return None
    return max(start, low)
