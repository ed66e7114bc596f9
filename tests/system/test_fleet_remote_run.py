"""The wrapper the playbook runs `edgebench plan run` under (fleet/remote_run.py): the
command ends with the connection that started it. A dropped SSH connection shows up on the
host as a hangup of the session's terminal or as the death of the process that started
the command (Ansible's module); either way nothing is left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from edgebench.fleet import remote_run

WRAPPER = Path(remote_run.__file__)


def _child_of(wrapper: int) -> psutil.Process:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = psutil.Process(wrapper).children()
        if children:
            return children[0]
        time.sleep(0.05)
    raise AssertionError("the wrapper started no command")


def _gone(process: psutil.Process, within: float = 15) -> bool:
    try:
        process.wait(timeout=within)
    except psutil.TimeoutExpired:
        process.kill()
        return False
    return True


def test_a_hangup_stops_the_command_and_exits_128_plus_the_signal() -> None:
    wrapper = subprocess.Popen([sys.executable, str(WRAPPER), "sleep", "120"])
    command = _child_of(wrapper.pid)
    wrapper.send_signal(signal.SIGHUP)
    assert wrapper.wait(timeout=15) == 128 + signal.SIGHUP
    assert _gone(command)


def test_the_command_ends_when_what_started_the_wrapper_dies() -> None:
    # sh stands for Ansible's module process: killed, as a dropped connection kills it.
    starter = subprocess.Popen(
        ["sh", "-c", f'"{sys.executable}" "{WRAPPER}" sleep 120 & wait'],
        start_new_session=True,
    )
    wrapper = _child_of(starter.pid)
    command = _child_of(wrapper.pid)
    os.kill(starter.pid, signal.SIGKILL)
    starter.wait()
    assert _gone(wrapper) and _gone(command)


def test_the_command_ends_when_the_wrapper_is_killed() -> None:
    wrapper = subprocess.Popen([sys.executable, str(WRAPPER), "sleep", "120"])
    command = _child_of(wrapper.pid)
    wrapper.kill()
    wrapper.wait()
    assert _gone(command)


@pytest.mark.parametrize(("argv", "code"), [(["true"], 0), (["sh", "-c", "exit 3"], 3)])
def test_the_exit_code_is_the_commands(argv: list[str], code: int) -> None:
    done = subprocess.run([sys.executable, str(WRAPPER), *argv], timeout=30)
    assert done.returncode == code
