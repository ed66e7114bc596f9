"""A full disk at every stage of a run (the run lock, the manifest's first write, the idle
baseline's timeline rows, a sample, the manifest between arms) is one line that says what
is kept and how to continue, with the manifest marked where it can still be written; a
Ctrl-C at every stage before the arms (the idle power baseline included) and while the
last files are written leaves the manifest `interrupted`. The disk is made full by
failing the system calls edgebench's writers make (tests/helpers/full_disk.py); a real
full file system is in tests/system/test_full_disk.py."""

from __future__ import annotations

import errno
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from edgebench import io
from edgebench.errors import RunFailure
from edgebench.io import JsonlAppender, read_jsonl
from edgebench.runfolder.folder import LOCK_FILE, RESERVE_FILE
from edgebench.runner import engine
from edgebench.runner.engine import RunInterrupted
from tests.helpers.fakes import RIGHT
from tests.helpers.full_disk import FullDisk, full_disk
from tests.helpers.power import FakePower
from tests.helpers.run_fake import NOTHING_READABLE, RunFake

ENOSPC = "No space left on device"


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> FullDisk:
    return full_disk(monkeypatch)


def stopped_with(run_dir: Path, kept: int) -> str:
    """The line a run stopped by a full disk ends with, once its manifest exists."""
    return (
        f"could not write to {run_dir}: {ENOSPC}; {kept} completed examples are safe in "
        f"samples.jsonl; free space, then continue with `edgebench run --resume {run_dir}`"
    )


def manifest(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "manifest.json").read_text())


# -- the run lock and the first manifest -----------------------------------------------
def test_a_full_disk_at_the_run_lock_is_one_line_and_leaves_nothing(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    disk.fill(LOCK_FILE)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2)
    run_dir = tmp_path / "run"
    assert str(info.value) == (
        f"could not write to {run_dir}: {ENOSPC}; nothing was written; free space, then "
        "run the same command again"
    )
    assert list(run_dir.iterdir()) == []  # no lock file, no manifest
    disk.free()
    assert run_fake([RIGHT] * 2, n=2).summary.arms[0].n_examples == 2  # the same command


def test_a_full_disk_at_the_run_lock_of_a_resume_leaves_the_folder_unchanged(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    run_dir = tmp_path / "run"
    run_fake([RIGHT] * 2, n=2)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    disk.fill(LOCK_FILE)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2, resume=True)
    assert str(info.value) == (
        f"could not write to {run_dir}: {ENOSPC}; the run folder is unchanged; free space, "
        f"then continue with `edgebench run --resume {run_dir}`"
    )
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def test_a_full_disk_at_the_first_manifest_write_is_one_line_and_leaves_nothing(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    disk.fill(".manifest.json.")
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2)
    run_dir = tmp_path / "run"
    assert str(info.value).endswith(
        "nothing was written; free space, then run the same command again"
    )
    assert list(run_dir.iterdir()) == []
    disk.free()
    run_fake([RIGHT] * 2, n=2)
    assert manifest(run_dir)["status"] == "completed"


@pytest.mark.parametrize("full_at", [LOCK_FILE, ".manifest.json."])
def test_a_run_folder_made_by_the_run_is_removed_when_nothing_was_written(
    run_fake: RunFake,
    tmp_path: Path,
    disk: FullDisk,
    monkeypatch: pytest.MonkeyPatch,
    full_at: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    disk.fill(full_at)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT], n=1, out=None)
    assert str(info.value).endswith(
        "nothing was written; free space, then run the same command again"
    )
    assert list((tmp_path / "runs").iterdir()) == []


def test_a_run_folder_that_cannot_be_made_is_one_line(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused write is exit 1 whatever the reason, as everywhere (failures.py)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").write_text("a file where the runs folder goes")
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT], n=1, out=None)
    assert info.value.exit_code == 1
    assert str(info.value).startswith("could not write to runs: ")
    assert str(info.value).endswith(
        "; nothing was written; fix it, then run the same command again"
    )


def test_a_refused_write_that_is_not_a_full_disk_ends_a_run_with_exit_1(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's path of a refused write (no permission on the summary): exit 1 as the
    `card --out` path (tests/unit/report/test_output_safety.py), with what is kept and
    the resume hint; fixed, the hint finishes the run."""
    run_dir = tmp_path / "run"
    real = io.tempfile.mkstemp

    def mkstemp(*args: object, prefix: str = "", **kwargs: object) -> object:
        if prefix.startswith(".summary.json."):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real(*args, prefix=prefix, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(io.tempfile, "mkstemp", mkstemp)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2)
    assert info.value.exit_code == 1
    assert str(info.value) == (
        f"could not write to {run_dir / 'summary.json'}: Permission denied; the previous "
        "summary.json is unchanged and samples.jsonl holds 2 examples; fix it, then "
        f"continue with `edgebench run --resume {run_dir}`"
    )
    monkeypatch.setattr(io.tempfile, "mkstemp", real)
    assert run_fake([RIGHT] * 2, n=2, resume=True).summary.arms[0].n_examples == 2


# -- later stages: the manifest is marked, the hint given --------------------------------
def test_a_full_disk_during_the_idle_baseline_marks_the_manifest_and_gives_the_hint(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    disk.fill("timeline.jsonl")
    meter = FakePower(lambda t: 4.0)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2, power=meter.choice(), idle_baseline=0.05)
    run_dir = tmp_path / "run"
    assert str(info.value) == stopped_with(run_dir, 0)
    stored = manifest(run_dir)
    assert stored["status"] == "failed" and ENOSPC in str(stored["error"])
    assert stored["resume_with"] == f"edgebench run --resume {run_dir}"
    disk.free()
    run_fake([RIGHT] * 2, n=2, power=meter.choice(), idle_baseline=0.05, resume=True)
    assert manifest(run_dir)["status"] == "completed"


def test_a_full_disk_at_a_sample_write_stops_the_run_with_the_hint_and_resumes(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    disk.fill("samples.jsonl", after=2)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 4, n=4)
    run_dir = tmp_path / "run"
    assert str(info.value) == stopped_with(run_dir, 2)
    assert manifest(run_dir)["status"] == "failed"
    disk.free()
    run_fake([RIGHT] * 4, n=4, resume=True)
    assert [s["id"] for s in read_jsonl(run_dir / "samples.jsonl")] == [f"ex{i}" for i in range(4)]


def test_a_full_disk_at_a_manifest_write_between_arms_gives_the_resume_hint(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    """The manifest write that fails is an io.WriteFailed (a RunFailure of its own): the run's
    ending still names the folder, what is kept and how to continue."""
    disk.fill(".manifest.json.", after=4, times=1)  # the arm's end; the next write works
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2)
    run_dir = tmp_path / "run"
    assert str(info.value) == stopped_with(run_dir, 2)
    assert manifest(run_dir)["status"] == "failed"


def test_the_room_held_for_the_last_manifest_write_marks_a_run_on_a_full_disk(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk
) -> None:
    """Once the disk is full no manifest can be written, but the run held some room
    for its last one: given back, the manifest says how the run ended."""
    disk.fill("samples.jsonl", ".manifest.json.", after=4, room_from=RESERVE_FILE)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 2, n=2)  # four manifest writes, then the first sample fails
    run_dir = tmp_path / "run"
    assert str(info.value) == stopped_with(run_dir, 0)
    stored = manifest(run_dir)
    assert stored["status"] == "failed" and ENOSPC in str(stored["error"])
    assert stored["resume_with"] == f"edgebench run --resume {run_dir}"
    assert not (run_dir / RESERVE_FILE).exists()


def test_the_room_held_is_given_back_when_the_run_ends(run_fake: RunFake, tmp_path: Path) -> None:
    run_fake([RIGHT], n=1)
    assert not (tmp_path / "run" / RESERVE_FILE).exists()


def test_a_record_that_could_not_be_written_never_lands_later(
    tmp_path: Path, disk: FullDisk
) -> None:
    """A line the disk refused is not kept in a buffer to be written at close (when
    space may be back): the file ends at the last record written."""
    path = tmp_path / "rows.jsonl"
    disk.fill("rows.jsonl", after=1)
    log = JsonlAppender(path)
    log.append({"n": 1})
    with pytest.raises(OSError):
        log.append({"n": 2})
    disk.free()
    log.close()  # no second error, no late line
    assert read_jsonl(path) == [{"n": 1}]


def test_a_part_written_line_is_finished_in_the_same_append(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    real_write = os.write
    sizes: list[int] = []

    def short_write(fd: int, data: bytes) -> int:  # the system takes 3 bytes at a time
        sizes.append(len(data))
        return real_write(fd, bytes(data[:3]))

    log = JsonlAppender(path)
    try:
        os.write = short_write  # type: ignore[assignment]
        log.append({"key": "value"})
    finally:
        os.write = real_write  # type: ignore[assignment]
        log.close()
    assert read_jsonl(path) == [{"key": "value"}] and len(sizes) > 1


# -- Ctrl-C ---------------------------------------------------------------------------
def sigint_at_main_thread_read(after: int):
    """A heat reader (the timeline's) that sends this process a real SIGINT at its
    `after`-th read from the main thread: the idle baseline's readings."""
    calls: list[int] = []

    def heat() -> dict[str, object]:
        if threading.current_thread() is threading.main_thread():
            calls.append(1)
            if len(calls) == after:
                os.kill(os.getpid(), signal.SIGINT)
        return dict(NOTHING_READABLE)

    return heat


@pytest.mark.parametrize("after", [1, 2])
def test_ctrl_c_during_the_idle_baseline_marks_the_run_interrupted(
    run_fake: RunFake, tmp_path: Path, after: int
) -> None:
    meter = FakePower(lambda t: 4.0)
    with pytest.raises(RunInterrupted) as info:
        run_fake(
            [RIGHT] * 2,
            n=2,
            power=meter.choice(),
            idle_baseline=0.05,
            heat=sigint_at_main_thread_read(after),
        )
    run_dir = tmp_path / "run"
    assert info.value.resume == f"edgebench run --resume {run_dir}"
    stored = manifest(run_dir)
    assert stored["status"] == "interrupted"
    assert stored["resume_with"] == f"edgebench run --resume {run_dir}"
    assert not (run_dir / LOCK_FILE).exists()
    assert not [t for t in threading.enumerate() if t.name == "edgebench-timeline"]
    result = run_fake([RIGHT] * 2, n=2, power=meter.choice(), idle_baseline=0.05, resume=True)
    assert result.summary.arms[0].n_examples == 2
    assert manifest(run_dir)["status"] == "completed"


def test_ctrl_c_while_the_last_files_are_written_keeps_them_whole_and_interrupted(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = engine.summarize

    def summarize(*args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGINT)  # between manifest.json and summary.json
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "summarize", summarize)
    with pytest.raises(RunInterrupted) as info:
        run_fake([RIGHT] * 2, n=2)
    run_dir = tmp_path / "run"
    assert info.value.n_samples == 2
    assert manifest(run_dir)["status"] == "interrupted"
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "interrupted"


def test_ctrl_c_while_the_first_manifest_is_written_says_nothing_was_written(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from edgebench.runfolder import folder

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(folder, "write_json_atomic", interrupted)
    with pytest.raises(RunInterrupted) as info:
        run_fake([RIGHT], n=1)
    assert info.value.resume is None
    assert list((tmp_path / "run").iterdir()) == []


class _SignalInFinalizer:
    """An object whose finalizer sends this process `signum`: the handler's
    KeyboardInterrupt is raised inside `__del__`, where Python prints "Exception ignored"
    and goes on, as it does when a real signal lands in a finalizer."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        os.kill(os.getpid(), self.signum)
        for _ in range(1000):  # bytecodes: the handler runs here, inside the finalizer
            pass


def signal_lost_in_a_finalizer(signum: int):
    """A heat reader that, at the idle baseline's first reading, has a stop signal's
    KeyboardInterrupt swallowed by a finalizer."""
    sent: list[int] = []

    def heat() -> dict[str, object]:
        if threading.current_thread() is threading.main_thread() and not sent:
            sent.append(signum)
            _SignalInFinalizer(signum)  # dropped at once: __del__ runs now
        return dict(NOTHING_READABLE)

    return heat


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(
    "signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"]
)
def test_a_stop_signal_a_finalizer_swallowed_still_ends_the_idle_baseline_at_once(
    run_fake: RunFake, tmp_path: Path, signum: int
) -> None:
    """Before: SIGTERM and SIGHUP were not remembered (the run went on to complete) and
    a swallowed Ctrl-C waited out the whole baseline and the first example."""
    from edgebench.cli.console import stop_signals

    meter = FakePower(lambda t: 4.0)
    started = time.monotonic()
    with stop_signals(), pytest.raises(RunInterrupted):
        run_fake(
            [RIGHT] * 2,
            n=2,
            power=meter.choice(),
            idle_baseline=30,
            heat=signal_lost_in_a_finalizer(signum),
        )
    assert time.monotonic() - started < 10
    stored = manifest(tmp_path / "run")
    assert stored["status"] == "interrupted" and stored["arms"] == []
