"""--resume after a run was stopped from outside, with real processes: a worker SIGKILLed
mid-arm, the whole run SIGKILLed (a power cut, as far as the folder can tell), Ctrl-C;
and the run-folder lock held by another live process, then by a dead one."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import BackendWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runfolder.folder import LOCK_FILE
from tests.helpers.faults import echo_examples, kill_worker_after
from tests.helpers.processes import wait_for_lines
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of, sample_content

REPO = Path(__file__).resolve().parents[2]
FAULT_RUN = REPO / "tests" / "helpers" / "fault_run.py"
N = 8


def echo_run(run_fake: RunFake, out: Path, *, pids: list[int] | None = None, **kw: Any) -> Any:
    """N examples answered by echo (a distinct JSON object each); with `pids`, each
    worker a real process whose pid is collected there, else in this process."""
    factory = None
    if pids is not None:

        def factory(model: Any, mode: str) -> BackendWorker:
            worker = BackendWorker("fake", {"echo": True})
            pids.append(worker.pid)
            return worker

    return run_fake(
        FakeBackend(echo=True), examples=echo_examples(N), out=out, factory=factory, **kw
    )


def test_worker_sigkilled_after_n_examples_then_resume_matches_an_uninterrupted_run(
    run_fake: RunFake, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    echo_run(run_fake, reference, constraints=("none", "json"))
    out = tmp_path / "run"
    pids: list[int] = []
    # The example after the kill is lost with the worker and recorded; a fresh worker
    # runs the rest of the arm.
    first = echo_run(
        run_fake,
        out,
        pids=pids,
        constraints=("none", "json"),
        progress=kill_worker_after(3, pids),
    )
    assert first.worker_failures == 1
    records = read_jsonl(out / "samples.jsonl")
    lost = [s for s in records if s["finish_reason"] == "crashed"]
    assert [(s["constraint"], s["id"]) for s in lost] == [("none", "ex3")]
    assert "SIGKILL" in lost[0]["error"]
    assert len(records) == 2 * N
    arm = manifest_of(out)["arms"][0]
    assert arm["restarts"] == 1 and [f["id"] for f in arm["worker_failures"]] == ["ex3"]

    result = echo_run(run_fake, out, pids=pids, resume=True, constraints=("none", "json"))
    assert sample_content(out) == sample_content(reference)
    manifest = manifest_of(out)
    assert manifest["status"] == "completed" and result.worker_failures == 0
    (entry,) = manifest["resumes"]
    assert entry["worker_failures_retried"] == 1 and entry["samples_kept"] == 2 * N - 1
    none = result.summary.arm("fake-model", "none")
    assert none is not None and none.n_examples == N and none.n_crashed == 0


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_fault_run(out: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(FAULT_RUN), str(out), str(N), *args],
        cwd=REPO,
        # As from a terminal, whatever an earlier test did to this process's SIGINT (an
        # ignored SIGINT is inherited, and Python then leaves Ctrl-C ignored).
        preexec_fn=_default_sigint,
    )


def test_parent_sigkilled_mid_run_then_resume_matches_an_uninterrupted_run(
    run_fake: RunFake, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    echo_run(run_fake, reference)
    out = tmp_path / "run"
    proc = start_fault_run(out, "--delay", "0.2")
    wait_for_lines(out / "samples.jsonl", 3, proc)
    proc.send_signal(signal.SIGKILL)  # a power cut, as far as the run folder can tell
    proc.wait(10)
    # The last append was cut short by the crash.
    with (out / "samples.jsonl").open("a") as handle:
        handle.write('{"index": 7, "id": "ex7", "raw_outp')
    assert manifest_of(out)["status"] == "running"
    assert (out / LOCK_FILE).exists()  # left behind by the dead process: stale

    echo_run(run_fake, out, resume=True)
    assert sample_content(out) == sample_content(reference)
    manifest = manifest_of(out)
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == "running" and entry["torn_line_dropped"] is True
    assert entry["stale_lock"]["pid"] == proc.pid
    assert manifest["status"] == "completed" and not (out / LOCK_FILE).exists()


def test_sigint_mid_run_marks_it_interrupted_and_keeps_samples(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    proc = start_fault_run(out, "--delay", "0.2")
    wait_for_lines(out / "samples.jsonl", 2, proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 130
    manifest = manifest_of(out)
    assert manifest["status"] == "interrupted"
    assert manifest["arms"][0]["status"] == "interrupted"
    kept = read_jsonl(out / "samples.jsonl")
    assert 2 <= len(kept) < N and all(s["finish_reason"] == "json_complete" for s in kept)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert summary["arms"][0]["n_examples"] == len(kept)
    assert not (out / LOCK_FILE).exists()
    # ... and it resumes to the full set.
    echo_run(run_fake, out, resume=True)
    assert [s["id"] for s in read_jsonl(out / "samples.jsonl")] == [f"ex{i}" for i in range(N)]
    assert manifest_of(out)["resumes"][0]["previous_status"] == "interrupted"


HOLD_LOCK = """
import sys, time
from pathlib import Path
from edgebench.runfolder.folder import RunLock
RunLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def test_a_lock_held_by_another_process_refuses_until_that_process_dies(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, out)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(out)], cwd=REPO, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        with pytest.raises(UserError, match=rf"in use by another edgebench run \(pid {holder.pid}"):
            echo_run(run_fake, out, resume=True)
    finally:
        holder.kill()  # the kernel drops its flock; the lock file stays behind
        holder.wait(10)
    assert (out / LOCK_FILE).exists()
    echo_run(run_fake, out, resume=True)
    (entry,) = manifest_of(out)["resumes"]
    assert entry["stale_lock"]["pid"] == holder.pid
