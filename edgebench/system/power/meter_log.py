"""An external meter's log, `--power-log FILE`: a CSV of `time,watts` rows written by a
USB-C meter, a smart plug or an INA219/INA226 logger during the run, read after it and
aligned with the run by timestamp.

time is unix seconds or an ISO 8601 timestamp (without a zone: this machine's local
time); a first line that is neither (a header such as `time,watts`) is skipped. Rows must
go forward in time; watts are finite and >= 0.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from statistics import median

from edgebench.errors import UserError
from edgebench.system.power.command import METER_COVERS
from edgebench.system.power.sample import PowerSample

# unix seconds past this are milliseconds or microseconds (year 5138 in seconds)
_MAX_SECONDS = 1e11


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _time(text: str) -> float | None:
    seconds = _number(text)
    if seconds is not None:
        return seconds
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def read_power_log(path: Path) -> list[PowerSample]:
    """The log's samples in time order; UserError naming file:line on a bad row."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) else "not UTF-8 text"
        raise UserError(f"--power-log {path}: cannot read it ({why})") from None
    samples: list[PowerSample] = []
    for line_no, row in enumerate(csv.reader(text.splitlines()), start=1):
        fields = [field.strip() for field in row]
        if not any(fields):
            continue
        where = f"{path}:{line_no}"
        if len(fields) != 2:
            raise UserError(f"{where}: expected 2 columns time,watts, got {len(fields)}")
        t, watts = _time(fields[0]), _number(fields[1])
        if line_no == 1 and t is None and watts is None:
            continue  # the header
        if t is None or not math.isfinite(t):
            raise UserError(f"{where}: time {fields[0]!r} is neither unix seconds nor ISO 8601")
        if t > _MAX_SECONDS:
            raise UserError(f"{where}: time {fields[0]} is not unix seconds (milliseconds?)")
        if watts is None or not math.isfinite(watts):
            raise UserError(f"{where}: watts {fields[1]!r} is not a number")
        if watts < 0:
            raise UserError(f"{where}: watts {fields[1]} is negative")
        if samples and t <= samples[-1].t:
            raise UserError(
                f"{where}: time {fields[0]} is not after the row before it: "
                "rows must go forward in time"
            )
        samples.append(PowerSample(t=t, watts=watts, joules=None))
    if not samples:
        raise UserError(f"--power-log {path}: no time,watts rows")
    return samples


@dataclass(frozen=True)
class PowerLogInfo:
    """The description of a --power-log source, as a live source describes itself."""

    resolution: str
    covers: str = METER_COVERS
    name: str = "log"
    tier: str = "external"


def describe_power_log(samples: Sequence[PowerSample]) -> PowerLogInfo:
    steps = [b.t - a.t for a, b in pairwise(samples)]
    every = f"a reading every {median(steps):.3g} s (median)" if steps else "one reading"
    return PowerLogInfo(resolution=f"the meter's own readings from its log, {every}")
