"""A dropped SSH session (SIGHUP) ends `edgebench run` as Ctrl-C and SIGTERM do: the run
marked interrupted (not left `running`), its lock released, the cursor the progress bar hid
shown again, exit code 130, and the command that continues it kept in the manifest (the
terminal that would have shown it is gone). The real command in a process of its own, on
the fake model (tests/helpers/fault_cli.py), stopped by a real signal. Under `nohup` (SIGHUP
ignored when the run starts) a hangup leaves the run alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest

from edgebench.runfolder.folder import LOCK_FILE
from tests.helpers.processes import wait_for_lines
from tests.helpers.run_folder import manifest_of

REPO = Path(__file__).resolve().parents[2]
FAULT_CLI = REPO / "tests" / "helpers" / "fault_cli.py"
N = 8
HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


def _default_sighup() -> None:
    # A test runner started under `nohup` passes SIGHUP on ignored; the run would keep
    # ignoring it, as it should under nohup, and this test would see no hangup.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_run(tmp_path: Path, preexec_fn: Callable[[], Any] = _default_sighup) -> Popen[str]:
    """`edgebench run` of 8 examples, 0.2 s each, into tmp_path/run, once 2 are done."""
    payloads = tmp_path / "payloads.jsonl"
    payloads.write_text("".join(f'{{"k{i}": {i}}}\n' for i in range(N)))
    out = tmp_path / "run"
    args = ["run", "--task", "roundtrip", "--dataset", str(payloads), "--out", str(out)]
    env = {**os.environ, "TTY_COMPATIBLE": "1"}  # a terminal, as far as rich can tell
    proc = subprocess.Popen(
        [sys.executable, str(FAULT_CLI), "0.2", *args],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )
    wait_for_lines(out / "samples.jsonl", 2, proc)
    return proc


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
def test_a_hangup_or_kill_marks_the_run_interrupted_and_keeps_the_resume_hint(
    tmp_path: Path, signum: signal.Signals
) -> None:
    out = tmp_path / "run"
    proc = start_run(tmp_path)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    manifest = manifest_of(out)
    assert manifest["status"] == "interrupted"
    assert manifest["arms"][0]["status"] == "interrupted"
    assert manifest["resume_with"] == f"edgebench run --resume {out}"
    assert f"continue with: edgebench run --resume {out}" in err
    assert not (out / LOCK_FILE).exists()
    assert HIDE_CURSOR in err and err.rindex(SHOW_CURSOR) > err.rindex(HIDE_CURSOR)


def _ignore_sighup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_under_nohup_a_hangup_is_ignored_and_the_run_completes(tmp_path: Path) -> None:
    proc = start_run(tmp_path, _ignore_sighup)  # as `nohup edgebench run` starts it
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert manifest_of(tmp_path / "run")["status"] == "completed"
