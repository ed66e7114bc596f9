"""--power-log under a meter that misbehaves (issue "a flaky meter ends the run"): the log
is read as a stream, in memory that does not grow with its length; a bad line among its
first rows is a one-line error naming file:line before the run; one written later (an
over-long field, bytes that are not UTF-8, a broken quote, a NUL) is a line lost, counted
with its reason in the arm's energy, and never the end of the run."""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.errors import UserError
from edgebench.runfolder.read import read_manifest, read_rows
from edgebench.runfolder.records import PowerReading, RunSettings
from edgebench.runner.power import check_power_settings
from edgebench.system.power import PowerChoice
from edgebench.system.power.meter_log import (
    HEAD_ROWS,
    MAX_LINE_BYTES,
    BadLine,
    scan_power_log,
)
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

BAD_LINES = {
    b"1764129600," + b"9" * 200_000 + b"\n": f"a line longer than {MAX_LINE_BYTES} bytes",
    b"\xff\xfe1764129600,4\n": "not UTF-8 text",
    b'1764129600,"4\n': "not CSV",
    b"17641\x0029600,4\n": "not CSV",
    b"1764129600,4,5\n": "not 2 columns time,watts",
    b"yesterday,4\n": "time is neither unix seconds nor ISO 8601",
    b"1764129600,-1\n": "watts is negative",
    b"1764129600,1e308\n": "watts over 1e+06 W",
    b"1764129000,4\n": "time is not after the row before it",  # a clock stepped back
    b"1764129600\r1764129601,4\n": "time is neither unix seconds nor ISO 8601",  # a CR
}


@pytest.mark.parametrize(("line", "reason"), list(BAD_LINES.items()))
def test_a_bad_line_is_a_reason_and_the_stream_goes_on(
    tmp_path: Path, line: bytes, reason: str
) -> None:
    log = tmp_path / "meter.csv"
    log.write_bytes(b"time,watts\n1764129500,4\n" + line + b"1764129700,5\n")
    rows = list(scan_power_log(log))
    assert [r.t for r in rows if not isinstance(r, BadLine)] == [1764129500.0, 1764129700.0]
    (bad,) = [r for r in rows if isinstance(r, BadLine)]
    assert (bad.line, bad.reason) == (3, reason)


@pytest.mark.parametrize("line", list(BAD_LINES))
def test_a_bad_line_among_the_first_rows_is_one_line_naming_file_and_line(
    tmp_path: Path, line: bytes
) -> None:
    log = tmp_path / "meter.csv"
    log.write_bytes(b"time,watts\n1764129500,4\n" + line)
    with pytest.raises(UserError) as caught:
        check_power_settings(RunSettings(power_log=log))
    message = str(caught.value)
    assert message.startswith(f"{log}:3: ") and "\n" not in message and len(message) < 400


def test_a_bad_line_past_the_first_rows_waits_for_the_end_of_the_run(tmp_path: Path) -> None:
    log = tmp_path / "meter.csv"
    rows = "".join(f"{1764129600 + i},4\n" for i in range(HEAD_ROWS + 5))
    log.write_bytes(rows.encode() + b"\xff\n")
    check_power_settings(RunSettings(power_log=log))  # no error: checked when it ends


def test_memory_does_not_grow_with_the_log(tmp_path: Path) -> None:
    log = tmp_path / "meter.csv"
    with log.open("w") as handle:
        for block in range(20):
            t0 = 1764129600 + block * 10_000
            handle.write("".join(f"{t0 + i * 0.1:.1f},{4 + i % 7}\n" for i in range(10_000)))
    tracemalloc.start()
    count = sum(1 for _ in scan_power_log(log))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 200_000
    assert peak < 1_000_000  # bytes: a line at a time, whatever the length


class Writing(FakeBackend):
    """The fake model, with the meter appending to its log while each example decodes:
    a line every 5 ms from `t0 - 0.5` s on, every 10th not UTF-8 and every 10th one over-long."""

    def __init__(self, log: Path, t0: float) -> None:
        timings = FakeTimings(per_prompt_token=0.0005, per_output_token=0.002)
        super().__init__([RIGHT] * 3, timings=timings, delay_s=0.05)
        self.log, self.t0, self.next = log, t0, 100

    def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
        with self.log.open("ab") as handle:
            for i in range(self.next, self.next + 200):
                t = f"{self.t0 - 0.5 + 0.005 * i:.3f}".encode()
                if i % 10 == 0:
                    handle.write(t + b",4.\xff\n")
                elif i % 10 == 5:
                    handle.write(t + b"," + b"7" * (MAX_LINE_BYTES + 10) + b"\n")
                else:
                    handle.write(t + b",4.0\n")
        self.next += 200
        return super().generate(prompt, settings)


def test_lines_the_meter_spoils_during_the_run_are_counted_not_fatal(
    run_fake: RunFake, tmp_path: Path
) -> None:
    t0 = time.time()
    log = tmp_path / "meter.csv"
    log.write_text(
        "time,watts\n" + "".join(f"{t0 - 0.5 + 0.005 * i:.3f},4.0\n" for i in range(100))
    )
    result = run_fake(
        Writing(log, t0), n=3, power=PowerChoice(None, log, None), power_log=log, idle_baseline=0.0
    )
    assert read_manifest(result.run_dir).status == "completed"
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.total_j is not None and energy.n_measured == 3
    assert set(energy.lost_reasons) == {
        "not UTF-8 text",
        f"a line longer than {MAX_LINE_BYTES} bytes",
    }
    assert energy.readings_lost == sum(energy.lost_reasons.values()) > 0
    assert energy.partial is not None and "lost while the arm decoded" in energy.partial
    copied = read_rows(result.run_dir, "power-log.jsonl", PowerReading)
    lost = [r for r in copied if r.lost is not None]
    assert lost and all(r.watts is None and r.lost_count >= 1 for r in lost)


def test_a_log_swapped_for_a_fifo_or_device_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "meter.fifo"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a regular file"):
        list(scan_power_log(fifo))
    link = tmp_path / "zero.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(UserError, match="not a regular file"):
        list(scan_power_log(link))


def _gone(log: Path) -> None:
    log.unlink()


def _fifo(log: Path) -> None:
    log.unlink()
    os.mkfifo(log)


def _device(log: Path) -> None:
    log.unlink()
    log.symlink_to("/dev/zero")


def _folder(log: Path) -> None:
    log.unlink()
    log.mkdir()


def _emptied(log: Path) -> None:
    log.write_bytes(b"")


def _rotated(log: Path) -> None:  # logrotate: the rows moved aside, a new log begun
    log.rename(log.with_suffix(".1"))
    log.write_text("time,watts\n")


def _unreadable(log: Path) -> None:
    log.chmod(0)


class Spoiling(FakeBackend):
    """The fake model, with something happening to the meter's log at the second example."""

    def __init__(self, log: Path, spoil: Callable[[Path], None]) -> None:
        super().__init__([RIGHT] * 3, delay_s=0.01)
        self.log, self.spoil, self.calls = log, spoil, 0

    def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 2:
            self.spoil(self.log)
        return super().generate(prompt, settings)


@pytest.mark.parametrize(
    "spoil",
    [_gone, _fifo, _device, _folder, _emptied, _rotated],
    ids=["deleted", "a FIFO", "a link to /dev/zero", "a folder", "emptied", "rotated"],
)
def test_a_log_that_goes_away_during_the_run_costs_the_energy_not_the_run(
    run_fake: RunFake, tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    t0 = time.time()
    log = tmp_path / "meter.csv"
    log.write_text("time,watts\n" + "".join(f"{t0 - 5 + 0.5 * i:.3f},4.0\n" for i in range(9)))
    result = run_fake(
        Spoiling(log, spoil),
        n=3,
        power=PowerChoice(None, log, None),
        power_log=log,
        idle_baseline=0.0,
    )
    manifest = read_manifest(result.run_dir)
    assert manifest.status == "completed"
    assert (result.run_dir / "summary.json").is_file()
    assert len(result.summary.arms) == 1 and result.summary.arms[0].n_examples == 3
    if spoil in (_gone, _fifo, _device, _folder):
        assert manifest.power is not None and (manifest.power.reason or "").startswith(
            "--power-log: "
        )


@pytest.mark.parametrize(
    ("data", "rows"),
    [
        (b"\xef\xbb\xbftime,watts\r\n1764129600,4\r\n1764129601,5\r\n", 2),  # Windows
        (b"\xef\xbb\xbf1764129600,4\n", 1),  # a BOM, no header
        (b'"time","watts"\n"1764129600","4.5"\n', 1),  # every field quoted
        (b"time,watts\n\n1764129600 , 4\n,\n", 1),  # blank lines, spaces, empty fields
    ],
    ids=["BOM and CRLF", "BOM no header", "quoted", "blank lines"],
)
def test_logs_as_meters_write_them_are_read(tmp_path: Path, data: bytes, rows: int) -> None:
    log = tmp_path / "meter.csv"
    log.write_bytes(data)
    check_power_settings(RunSettings(power_log=log))
    assert len([r for r in scan_power_log(log) if not isinstance(r, BadLine)]) == rows


@pytest.mark.parametrize(
    "data",
    [b"time,watts\n", b"", b"\n\n", b"\xef\xbb\xbf"],
    ids=["header", "empty", "blank", "BOM"],
)
def test_a_log_without_rows_yet_is_one_line(tmp_path: Path, data: bytes) -> None:
    log = tmp_path / "meter.csv"
    log.write_bytes(data)
    with pytest.raises(UserError) as caught:
        check_power_settings(RunSettings(power_log=log))
    assert str(caught.value) == f"--power-log {log}: no time,watts rows"


def test_a_full_disk_when_the_log_is_copied_stops_the_run_with_the_hint(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """power-log.jsonl refused by the run folder's disk is the run's full disk, not the
    meter's fault (before: the run `completed` with its energy lost for good)."""
    from edgebench.errors import RunFailure
    from tests.helpers.full_disk import full_disk

    t0 = time.time()
    log = tmp_path / "meter.csv"
    log.write_text("time,watts\n" + "".join(f"{t0 - 5 + 0.5 * i:.3f},4.0\n" for i in range(60)))
    disk = full_disk(monkeypatch)
    disk.fill(".power-log.jsonl.")
    run = {"n": 2, "power": PowerChoice(None, log, None), "power_log": log, "idle_baseline": 0}
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, **run)
    run_dir = tmp_path / "run"
    assert str(info.value) == (
        f"could not write to {run_dir}: No space left on device; 2 completed examples are "
        f"safe in samples.jsonl; free space, then continue with `edgebench run --resume {run_dir}`"
    )
    assert read_manifest(run_dir).status == "failed"
    disk.free()
    result = run_fake([RIGHT] * 2, **run, resume=True)
    assert read_manifest(run_dir).status == "completed"
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.reason is None and energy.n_measured == 2
