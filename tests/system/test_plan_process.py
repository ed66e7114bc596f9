"""`edgebench plan run` as a program, each cell a real `edgebench run` process on the fake
model (tests/helpers/fault_cli.py, 0.4 s an answer): killed outright (SIGKILL) half-way
through a cell, the cell's own process stops cleanly too (it gets SIGTERM when its parent
dies) and the next `plan run` skips the finished cell, untouched, and continues the other
with --resume; Ctrl-C stops the plan and its cell with exit 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from edgebench.plan import execute
from edgebench.runfolder.folder import LOCK_FILE
from tests.helpers.plan_runs import MODEL, PLAN, write_plan
from tests.helpers.run_folder import manifest_of

REPO = Path(__file__).resolve().parents[2]
FAULT_CLI = REPO / "tests" / "helpers" / "fault_cli.py"
NONE = f"{MODEL}.roundtrip-payloads.none.t1.r1"
JSON = f"{MODEL}.roundtrip-payloads.json.t1.r1"
N = 4  # examples per cell, 0.4 s each: the test stops the second cell after its first


def _sigint(handler: signal.Handlers) -> Callable[[], object]:
    return lambda: signal.signal(signal.SIGINT, handler)


def plan_process(
    plan: Path, out: Path, sigint: signal.Handlers = signal.SIG_DFL
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(FAULT_CLI), "0.4", "plan", "run", str(plan), "--out", str(out)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        # SIG_DFL: as a terminal starts it (a test runner in the background would pass
        # SIGINT on ignored); SIG_IGN: as a shell starts a background job
        preexec_fn=_sigint(sigint),
    )


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def start_and_stop_in_second_cell(
    tmp_path: Path, signum: int, sigint: signal.Handlers = signal.SIG_DFL
) -> tuple[Path, str, int, float]:
    """A plan of 2 cells x N examples, stopped by `signum` once the second cell has
    decoded one example; waits until that cell's process has let go of its folder.
    The plan folder, the plan's stderr and exit code, and the seconds the stop took."""
    plan = write_plan(tmp_path, PLAN.replace("limit = 2", f"limit = {N}"), n_payloads=N)
    out = tmp_path / "out"
    proc = plan_process(plan, out, sigint)
    second = out / "runs" / JSON
    wait_until(lambda: lines(second / "samples.jsonl") >= 1, "the second cell's first example")
    proc.send_signal(signum)
    stopping = time.monotonic()
    _, err = proc.communicate(timeout=180)
    wait_until(lambda: not (second / LOCK_FILE).exists(), "the cell's process to stop")
    return out, err, proc.returncode, time.monotonic() - stopping


def test_a_plan_killed_mid_cell_continues_without_rerunning_the_finished_cell(
    tmp_path: Path,
) -> None:
    out, _, code, _ = start_and_stop_in_second_cell(tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    first, second = out / "runs" / NONE, out / "runs" / JSON
    assert manifest_of(first)["status"] == "completed"
    # the cell's own process was told (SIGTERM) and recorded how it stopped
    assert manifest_of(second)["status"] == "interrupted"
    kept = lines(second / "samples.jsonl")
    assert 1 <= kept < N
    finished = {p.name: p.stat().st_mtime_ns for p in first.iterdir()}

    again = plan_process(out.parent / "plan.toml", out)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert f"[1/2] {NONE}: done\n" in err
    assert f"[2/2] {JSON}: continuing\n" in err
    assert {p.name: p.stat().st_mtime_ns for p in first.iterdir()} == finished
    manifest = manifest_of(second)
    assert manifest["status"] == "completed" and len(manifest["resumes"]) == 1
    ids = [json.loads(line)["id"] for line in (second / "samples.jsonl").read_text().splitlines()]
    assert len(ids) == N == len(set(ids))  # the kept examples were not decoded again
    status = json.loads((out / "plan-status.json").read_text())
    assert status["state"] == "finished"
    assert [c["status"] for c in status["cells"]] == ["done", "done"]
    assert [c["ran"] for c in status["cells"]] == [False, True]
    # each process's output, every attempt, under logs/
    log = (out / "logs" / f"{JSON}.log").read_text()
    assert (
        log.startswith("$ edgebench run --model") and log.count("\n$ edgebench run --resume") == 1
    )


@pytest.mark.parametrize(
    ("signum", "sigint"),
    [
        (signal.SIGINT, signal.SIG_DFL),  # Ctrl-C in a terminal
        (signal.SIGTERM, signal.SIG_IGN),  # `kill` of a plan a shell started in the background
    ],
)
def test_ctrl_c_or_kill_stops_the_plan_and_its_cell_with_exit_130(
    tmp_path: Path, signum: int, sigint: signal.Handlers
) -> None:
    out, err, code, took = start_and_stop_in_second_cell(tmp_path, signum, sigint)
    assert took < execute.STOP_WAIT_S / 2  # the cell stopped when told, not killed at last
    assert code == 130, err
    assert "Traceback" not in err
    assert "interrupted: 1 done cells kept" in err
    assert manifest_of(out / "runs" / JSON)["status"] == "interrupted"
    status = json.loads((out / "plan-status.json").read_text())
    assert status["state"] == "interrupted"
    assert [c["status"] for c in status["cells"]] == ["done", "skipped"]
