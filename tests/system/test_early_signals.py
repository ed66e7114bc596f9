"""Ctrl-C (a real SIGINT) at the stages a run is most often stopped in, sent to a real
process: while the command's modules load (the first second of any command), and during
the idle power baseline before any model loads. Each ends with exit code 130, one line
and no traceback; once a run folder exists its manifest says `interrupted`."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgebench.runfolder.folder import LOCK_FILE
from tests.helpers.processes import wait_for_lines
from tests.helpers.run_folder import manifest_of

REPO = Path(__file__).resolve().parents[2]
FAULT_CLI = REPO / "tests" / "helpers" / "fault_cli.py"
IMPORT_TIME = "import time:"
# How `python -m edgebench` and the installed `edgebench` script start the command.
LAUNCHERS = {
    "python -m edgebench": ["-m", "edgebench"],
    "edgebench script": [
        "-c",
        "import sys; from edgebench.__main__ import entry; sys.exit(entry())",
    ],
}


def _default_sigint() -> None:
    # As from a terminal, whatever this test process does with SIGINT.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stderr_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip() and IMPORT_TIME not in line]


def _start(launcher: list[str], *args: str) -> subprocess.Popen[bytes]:
    """`edgebench ARGS` in a process of its own, reporting its imports (-X importtime)."""
    return subprocess.Popen(
        [sys.executable, "-X", "importtime", *launcher, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )


def _wait_for_import(proc: subprocess.Popen[bytes], module: str) -> bytes:
    """What the process wrote to stderr until Python reported `module` imported."""
    assert proc.stderr is not None
    seen, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 1)
        chunk = os.read(proc.stderr.fileno(), 65536) if ready else b""
        if ready and not chunk:
            pytest.fail(f"the command ended before {module} was imported")
        seen += chunk
        names = [line.rsplit("|", 1)[-1].strip() for line in seen.decode().splitlines()]
        if module in names:
            return seen
    proc.kill()
    pytest.fail(f"{module} was never imported")


def _interrupt(proc: subprocess.Popen[bytes], seen: bytes) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    try:
        rest = proc.stderr.read()
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, (seen + rest).decode(errors="replace")


@pytest.mark.parametrize("module", ["typer", "edgebench.cli.options"])
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_ctrl_c_while_the_command_loads_is_one_line_and_130(launcher: str, module: str) -> None:
    """SIGINT as soon as Python reports `module` imported: cli/app.py's imports still run
    (the command modules after the options they share)."""
    proc = _start(LAUNCHERS[launcher], "--help")
    code, err = _interrupt(proc, _wait_for_import(proc, module))
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert _stderr_lines(err) == ["interrupted: before the command started; nothing was done"]


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.2, 0.5, 1.0, 2.0])
def test_ctrl_c_in_the_first_second_of_a_command_is_never_a_traceback(
    tmp_path: Path, delay: float
) -> None:
    """Wherever the signal lands once edgebench starts (loading, parsing, the command's
    own work), one line and 130. The command is one that waits (a dataset that is a pipe
    nobody writes to) unless it refuses the pipe first (one line, exit 1 or 2). Python's
    own start-up before edgebench's first line is Python's: the clock starts when the
    `edgebench` package is imported."""
    fifo = tmp_path / "payloads.jsonl"
    os.mkfifo(fifo)
    proc = _start(["-m", "edgebench"], "data", "validate", "--dataset", str(fifo))
    seen = _wait_for_import(proc, "edgebench")
    time.sleep(delay)
    code, err = _interrupt(proc, seen)
    if code != 130:  # the command had ended by itself (refused the pipe)
        assert code in (1, 2), err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert len(_stderr_lines(err)) == 1, err


def test_ctrl_c_during_the_idle_power_baseline_marks_the_run_interrupted(tmp_path: Path) -> None:
    payloads = tmp_path / "payloads.jsonl"
    payloads.write_text("".join(f'{{"k{i}": {i}}}\n' for i in range(3)))
    out = tmp_path / "run"
    meter = "echo 5.0"  # a meter that reads 5 W
    args = ["run", "--task", "roundtrip", "--dataset", str(payloads), "--out", str(out)]
    args += ["--power-command", meter, "--idle-baseline", "60"]
    proc = subprocess.Popen(
        [sys.executable, str(FAULT_CLI), "0", *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    # the timeline's first row, then the baseline's own first reading: it is waiting now
    wait_for_lines(out / "timeline.jsonl", 2, proc)  # type: ignore[arg-type]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    last = _stderr_lines(err)[-1]
    assert last == (
        f"interrupted: 0 completed examples kept in {out}; "
        f"continue with: edgebench run --resume {out}"
    )
    manifest = manifest_of(out)
    assert manifest["status"] == "interrupted"
    assert manifest["resume_with"] == f"edgebench run --resume {out}"
    assert not (out / LOCK_FILE).exists()
