"""An external meter's log, `--power-log FILE`: a CSV of `time,watts` rows written by a
USB-C meter, a smart plug or an INA219/INA226 logger during the run, read after it and
aligned with the run by timestamp.

time is unix seconds or an ISO 8601 timestamp (without a zone: this machine's local
time); a first line that is neither (a header such as `time,watts`) is skipped. Rows must
go forward in time; watts are finite and >= 0.

The meter keeps writing while the run goes on, and a log may hold days of rows: it is
read as a stream (`scan_power_log`), once when the run starts for its first rows (a bad
one there is the user's mistake: a one-line error naming file:line) and once when it
ends, where a bad line is a reading lost and counted, never the run's end.
"""

from __future__ import annotations

import csv
import math
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from statistics import median
from typing import BinaryIO

from edgebench.errors import UserError
from edgebench.system.power.command import METER_COVERS
from edgebench.system.power.sample import MAX_WATTS, PowerSample

# unix seconds past this are milliseconds or microseconds (year 5138 in seconds)
_MAX_SECONDS = 1e11
MAX_LINE_BYTES = 4096  # a longer line is a bad line, read past without being kept
HEAD_ROWS = 1000  # rows checked when the run starts
_BOM = "\ufeff".encode()
_SHOWN = 40  # characters of a bad field an error shows


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


@dataclass(frozen=True)
class BadLine:
    """A line of the log that gives no reading: `reason` in words the same for every such
    line (losses are counted by it), `detail` with its values for a one-line error."""

    line: int
    reason: str
    detail: str


def _open(path: Path) -> BinaryIO:
    """The log for reading; a FIFO or device (which could block or never end) refused."""
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise UserError(f"--power-log {path}: cannot read it ({err.strerror or err})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserError(f"--power-log {path}: not a regular file (a FIFO or device?)")
    return os.fdopen(fd, "rb")


def _fields(text: str) -> list[str] | BadLine:
    if '"' not in text:  # the common case, without the csv module's cost per line
        return [field.strip() for field in text.split(",")]
    try:
        row = next(csv.reader([text], strict=True), [])
    except csv.Error as err:
        return BadLine(0, "not CSV", f"not CSV ({err})")
    return [field.strip() for field in row]


def _cut(field: str) -> str:
    """A field as an error shows it: at most _SHOWN characters."""
    return field if len(field) <= _SHOWN else field[:_SHOWN] + "..."


def _shown(field: str) -> str:
    """A field that is no number as an error shows it: quoted and escaped, cut short."""
    return repr(_cut(field))


def _row(line_no: int, raw: bytes, last_t: float | None) -> PowerSample | BadLine | None:
    """One line: its sample, why it gives none, or None (blank, or the header)."""
    if line_no == 1 and raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return BadLine(line_no, "not UTF-8 text", "not UTF-8 text")
    if "\0" in text:
        return BadLine(line_no, "not CSV", "not CSV (a NUL byte)")
    fields = _fields(text)
    if isinstance(fields, BadLine):
        return replace(fields, line=line_no)
    if not any(fields):
        return None
    if len(fields) != 2:
        got = f"expected 2 columns time,watts, got {len(fields)}"
        return BadLine(line_no, "not 2 columns time,watts", got)
    t, watts = _time(fields[0]), _number(fields[1])
    if line_no == 1 and t is None and watts is None:
        return None  # the header
    if t is None or not math.isfinite(t):
        why = "time is neither unix seconds nor ISO 8601"
        return BadLine(
            line_no, why, f"time {_shown(fields[0])} is neither unix seconds nor ISO 8601"
        )
    if t > _MAX_SECONDS:
        why = "time is not unix seconds (milliseconds?)"
        return BadLine(line_no, why, f"time {_cut(fields[0])} is not unix seconds (milliseconds?)")
    if watts is None or not math.isfinite(watts):
        return BadLine(
            line_no, "watts is not a number", f"watts {_shown(fields[1])} is not a number"
        )
    if watts < 0:
        return BadLine(line_no, "watts is negative", f"watts {_cut(fields[1])} is negative")
    if watts > MAX_WATTS:
        why = f"watts over {MAX_WATTS:g} W"
        return BadLine(line_no, why, f"watts {_cut(fields[1])} is more than any device draws")
    if last_t is not None and t <= last_t:
        return BadLine(
            line_no,
            "time is not after the row before it",
            f"time {_cut(fields[0])} is not after the row before it: rows must go forward in time",
        )
    return PowerSample(t=t, watts=watts, joules=None)


def scan_power_log(path: Path) -> Iterator[PowerSample | BadLine]:
    """The log's rows in file order, each a sample or why it is none, read as a stream:
    memory stays the same however long the log (a line is kept to MAX_LINE_BYTES; a
    longer one is skipped to its end). UserError only when the file cannot be opened."""
    with _open(path) as handle:
        last_t: float | None = None
        for line_no, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := handle.readline(MAX_LINE_BYTES + 1)) and not rest.endswith(b"\n"):
                    pass
                why = f"a line longer than {MAX_LINE_BYTES} bytes"
                yield BadLine(line_no, why, why)
                continue
            row = _row(line_no, raw, last_t)
            if isinstance(row, PowerSample):
                last_t = row.t
            if row is not None:
                yield row


def _strict(path: Path, rows: int | None) -> list[PowerSample]:
    """The first `rows` samples (None: all); UserError naming file:line on a bad line."""
    samples: list[PowerSample] = []
    for row in scan_power_log(path):
        if isinstance(row, BadLine):
            raise UserError(f"{path}:{row.line}: {row.detail}")
        samples.append(row)
        if rows is not None and len(samples) >= rows:
            break
    if not samples:
        raise UserError(f"--power-log {path}: no time,watts rows")
    return samples


def check_power_log(path: Path) -> None:
    """The log as the run starts: its first HEAD_ROWS rows must read (a bad line is a
    one-line error naming file:line); lines written later are checked when it ends."""
    _strict(path, HEAD_ROWS)


def read_power_log(path: Path) -> list[PowerSample]:
    """The whole log's samples in time order; UserError naming file:line on a bad row."""
    return _strict(path, None)


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
