"""`run_bounded`: a command that hangs, prints without end or leaves a child behind costs
its deadline and nothing more: its whole process group is gone when the call returns."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from edgebench.system.bounded_command import run_bounded
from edgebench.system.device import run_command


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead: only its parent (init, here) has not reaped it yet
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def wait_dead(pid: int, seconds: float = 10.0) -> bool:
    """Whether the process is gone (or a zombie) within `seconds`: killed before the call
    returned, it is at once; the wait is only for a busy machine to deliver the signal."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_output_and_exit_code() -> None:
    done = run_bounded(["sh", "-c", "echo 4.5; echo oops >&2; exit 3"], timeout=5)
    assert (done.returncode, done.stdout, done.stderr) == (3, b"4.5\n", b"oops\n")


def test_a_hang_ends_at_the_deadline(tmp_path: Path) -> None:
    """Cut off, not waited for: the command never reaches the line after its hang."""
    finished = tmp_path / "finished"
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(["sh", "-c", f"sleep 30; touch {finished}"], timeout=0.3)
    assert not finished.exists()


def test_a_child_holding_the_output_is_killed_with_its_group(tmp_path: Path) -> None:
    """The command ends at once; the child it leaves holding the output is killed at the
    deadline, not waited for (it never reaches the line after its sleep)."""
    pid_file, finished = tmp_path / "child.pid", tmp_path / "finished"
    script = f"(sleep 30; touch {finished}) & echo $! > {pid_file}; echo 5"
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(["sh", "-c", script], timeout=0.5)
    assert wait_dead(int(pid_file.read_text()))
    assert not finished.exists()


def test_a_child_left_running_is_killed_after_a_good_reading(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = f"sleep 30 >/dev/null 2>&1 & echo $! > {pid_file}; echo 5"
    done = run_bounded(["sh", "-c", script], timeout=5)
    assert (done.returncode, done.stdout) == (0, b"5\n")
    assert wait_dead(int(pid_file.read_text()))


def test_endless_output_is_capped_and_ends_at_the_deadline() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(["yes"], timeout=0.3)
    done = run_bounded(["head", "-c", "1000000", "/dev/zero"], timeout=5, limit=1000)
    assert done.stdout == b"\0" * 1000


def test_a_missing_program_is_an_os_error() -> None:
    with pytest.raises(FileNotFoundError):
        run_bounded(["no-such-program-here"], timeout=1)


def test_run_command_survives_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\nprintf 'temp=\\377\\376 51.6'\n")
    tool.chmod(0o755)
    assert run_command([str(tool)]) == "temp=\ufffd\ufffd 51.6"
