"""--resume: a run stopped by a killed worker or a killed parent ends with the same
samples as an uninterrupted run; what may and may not differ; the run-folder lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.worker import BackendWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runfolder.folder import LOCK_FILE, RunLock
from edgebench.runner.run import RunSettings, execute
from tests.unit.test_runner import EchoTask, examples, model

REPO = Path(__file__).resolve().parents[2]
N = 8


def content(run_dir: Path) -> list[tuple[Any, ...]]:
    """What must be identical between runs: ids, outputs, parses, scores, finish."""
    return [
        (
            s["constraint"],
            s["index"],
            s["id"],
            s["raw_output"],
            s["parsed"],
            s["scores"],
            s["finish_reason"],
        )
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]


def fake_run(
    out: Path,
    *,
    resume: bool = False,
    progress: Any = None,
    workers: list[BackendWorker] | None = None,
    **settings: Any,
) -> Any:
    """A run of N examples with the fake backend answering each prompt's first line in
    real worker processes (collected in `workers`)."""
    workers = [] if workers is None else workers

    def factory(mode: str) -> BackendWorker:
        workers.append(BackendWorker("fake", {"echo": True}))
        return workers[-1]

    cfg = RunSettings(out=out, warmup=False, **settings)
    result = execute(
        cfg,
        model(),
        EchoTask(),
        examples(N),
        {"path": "mem", "sha256": "d" * 64},
        worker_factory=factory,
        progress=progress,
        resume=resume,
    )
    return result


class KillWorkerAfter:
    """A progress hook that SIGKILLs the current worker after `n` samples."""

    def __init__(self, n: int, workers: list[BackendWorker]) -> None:
        self.n, self.seen, self.workers = n, 0, workers

    def start(self, total: int, description: str) -> None: ...
    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...

    def advance(self, sample: dict[str, Any]) -> None:
        self.seen += 1
        if self.seen == self.n:
            os.kill(self.workers[-1].pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("uninterrupted") / "run"
    fake_run(out, constraints=("none", "json"))
    return out


def test_worker_sigkilled_after_n_examples_then_resume_matches_an_uninterrupted_run(
    tmp_path: Path, uninterrupted: Path
) -> None:
    out = tmp_path / "run"
    workers: list[BackendWorker] = []
    # The example after the kill is lost with the worker and recorded; a fresh worker
    # runs the rest of the arm.
    first = fake_run(
        out, constraints=("none", "json"), progress=KillWorkerAfter(3, workers), workers=workers
    )
    assert first.worker_failures == 1
    records = read_jsonl(out / "samples.jsonl")
    lost = [s for s in records if s["finish_reason"] == "crashed"]
    assert [(s["constraint"], s["id"]) for s in lost] == [("none", "ex3")]
    assert "SIGKILL" in lost[0]["error"]
    assert len(records) == 2 * N

    result = fake_run(out, resume=True, constraints=("none", "json"))
    assert content(out) == content(uninterrupted)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and result.worker_failures == 0
    (entry,) = manifest["resumes"]
    assert entry["worker_failures_retried"] == 1 and entry["samples_kept"] == 2 * N - 1
    assert result.summary["n_examples"] == N and result.summary["n_crashed"] == 0


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        assert proc.poll() is None, "the run ended early"
        time.sleep(0.05)
    pytest.fail(f"{path} never reached {n} lines")


def start_fault_run(out: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "unit" / "fault_run.py"), str(out), str(N), *args],
        cwd=REPO,
        # As from a terminal, whatever an earlier test did to this process's SIGINT (an
        # ignored SIGINT is inherited, and Python then leaves Ctrl-C ignored).
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_parent_sigkilled_mid_run_then_resume_matches_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    reference = tmp_path / "reference"
    fake_run(reference)
    out = tmp_path / "run"
    proc = start_fault_run(out, "--delay", "0.2")
    wait_for_lines(out / "samples.jsonl", 3, proc)
    proc.send_signal(signal.SIGKILL)  # a power cut, as far as the run folder can tell
    proc.wait(10)
    # The last append was cut short by the crash.
    with (out / "samples.jsonl").open("a") as handle:
        handle.write('{"index": 7, "id": "ex7", "raw_outp')
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"
    assert (out / LOCK_FILE).exists()  # left behind by the dead process: stale

    fake_run(out, resume=True)
    assert content(out) == content(reference)
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == "running" and entry["torn_line_dropped"] is True
    assert entry["stale_lock"]["pid"] == proc.pid
    assert manifest["status"] == "completed" and not (out / LOCK_FILE).exists()


def test_sigint_mid_run_marks_it_interrupted_and_keeps_samples(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start_fault_run(out, "--delay", "0.2")
    wait_for_lines(out / "samples.jsonl", 2, proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 130
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert manifest["arms"]["none"]["status"] == "interrupted"
    kept = read_jsonl(out / "samples.jsonl")
    assert 2 <= len(kept) < N and all(s["finish_reason"] == "stop" for s in kept)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["n_examples"] == len(kept)
    assert not (out / LOCK_FILE).exists()
    # ... and it resumes to the full set.
    fake_run(out, resume=True)
    assert [s["id"] for s in read_jsonl(out / "samples.jsonl")] == [f"ex{i}" for i in range(N)]


def test_resume_refuses_another_model(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    other = model()
    other.sha256 = "1" * 64
    with pytest.raises(
        UserError,
        match=r"cannot resume .*: model sha256 differs \(run: 000000000000…, now: 111111111111…\)",
    ):
        execute(
            RunSettings(out=out, warmup=False),
            other,
            EchoTask(),
            examples(N),
            {"path": "mem", "sha256": "d" * 64},
            worker_factory=lambda m: BackendWorker("fake", {}),
            resume=True,
        )


def test_resume_refuses_another_dataset(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    with pytest.raises(
        UserError, match=r"dataset sha256 differs \(run: dddddddddddd…, now: eeeeeeeeeeee…\)"
    ):
        execute(
            RunSettings(out=out, warmup=False),
            model(),
            EchoTask(),
            examples(N),
            {"path": "mem", "sha256": "e" * 64},
            worker_factory=lambda m: BackendWorker("fake", {}),
            resume=True,
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"limit": 3}, r"setting --limit differs \(run: None, now: 3\)"),
        ({"threads": 7}, r"setting --threads differs \(run: 2, now: 7\)"),
        ({"max_tokens": 5}, r"setting --max-tokens differs"),
        ({"constraints": ("none", "json")}, r"setting --constraint differs"),
    ],
)
def test_resume_refuses_other_settings(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    out = tmp_path / "run"
    fake_run(out)
    with pytest.raises(UserError, match=message):
        fake_run(out, resume=True, **change)


def test_resume_may_change_timeout_and_crash_limit(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    result = fake_run(out, resume=True, timeout=30.0, max_crashes=5)
    assert result.summary["n_examples"] == N


def test_resume_of_a_missing_or_broken_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such run folder"):
        fake_run(tmp_path / "nope", resume=True)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{oops")
    with pytest.raises(UserError, match=r"manifest.json: not valid JSON"):
        fake_run(tmp_path / "broken", resume=True)


def test_a_corrupt_line_inside_samples_is_refused_with_its_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    lines[2] = "{garbage\n"
    (out / "samples.jsonl").write_text("".join(lines))
    with pytest.raises(UserError, match=r"samples.jsonl: line 3: not valid JSON"):
        fake_run(out, resume=True)


def test_a_second_run_cannot_write_a_locked_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    holder = RunLock(out).acquire()  # as a run in progress would
    try:
        with pytest.raises(
            UserError, match=rf"in use by another edgebench run \(pid {os.getpid()} on"
        ):
            fake_run(out, resume=True)
        with pytest.raises(UserError, match="in use by another edgebench run"):
            fake_run(tmp_path / "run")  # a new run with the same --out
    finally:
        holder.release()
    fake_run(out, resume=True)  # free again


def test_a_stale_lock_from_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = {"pid": int(dead.stdout), "host": "h", "since": "then"}
    (out / LOCK_FILE).write_text(json.dumps(stale))
    fake_run(out, resume=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["resumes"][-1]["stale_lock"] == stale


def test_resume_hint_for_a_non_empty_out(tmp_path: Path) -> None:
    out = tmp_path / "run"
    fake_run(out)
    with pytest.raises(
        UserError, match="not empty; choose another --out or continue it with --resume"
    ):
        fake_run(out)


class _SwallowingProgress:
    """A progress display that swallows the KeyboardInterrupt of a Ctrl-C arriving in it,
    as a finalizer would ("Exception ignored in ..."), after the second example."""

    def __init__(self) -> None:
        self.seen = 0

    def start(self, total: int, description: str) -> None: ...
    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...

    def advance(self, sample: dict[str, Any]) -> None:
        self.seen += 1
        if self.seen == 2:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)  # the handler runs here
            except KeyboardInterrupt:
                pass


def test_a_ctrl_c_swallowed_mid_run_still_stops_it(tmp_path: Path) -> None:
    from edgebench.runner.run import RunInterrupted

    out = tmp_path / "run"
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        with pytest.raises(RunInterrupted):
            fake_run(out, progress=_SwallowingProgress())
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(read_jsonl(out / "samples.jsonl")) == 2
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
