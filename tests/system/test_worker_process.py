"""The backend worker as a real process: it answers, reports its memory, and its death
(killed, crashed, failing to start, orphaned) is reported, never inherited."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.worker import BackendWorker
from edgebench.io import read_jsonl
from edgebench.isolation import WorkerDied, WorkerError
from edgebench.tasks.base import Example
from tests.helpers.fakes import OBJECT_SCHEMA, RIGHT, examples
from tests.helpers.run_fake import RunFake


def test_worker_process_generates_and_reports_memory() -> None:
    worker = BackendWorker("fake", {"outputs": ["{ }"]})
    try:
        assert worker.count_tokens(["a b", "c"]) == [2, 1]
        info, load_s = worker.load(256)
        assert info.n_ctx == 256 and load_s >= 0
        assert worker.generate("x y", DecodeSettings(max_tokens=8)).text == "{ }"
    finally:
        peak = worker.close()
    assert peak.peak_rss_mb > 5 and peak.samples >= 1


def test_crashed_worker_keeps_completed_samples(run_fake: RunFake, tmp_path: Path) -> None:
    exs = examples(3)
    exs[2] = Example("boom", "CRASH here", "s", OBJECT_SCHEMA, {"a": 1}, {"complexity": "simple"})
    options = {"outputs": [RIGHT], "crash_marker": "CRASH"}
    result = run_fake(examples=exs, factory=lambda model, mode: BackendWorker("fake", options))
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and result.worker_failures == 1
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert [(s["id"], s["finish_reason"]) for s in samples] == [
        ("ex0", "json_complete"),
        ("ex1", "json_complete"),
        ("boom", "crashed"),
    ]
    assert "SIGSEGV" in samples[2]["error"] and "'boom'" in samples[2]["error"]
    assert manifest["arms"][0]["restarts"] == 0  # nothing left to run after it
    arm = json.loads((tmp_path / "run" / "summary.json").read_text())["arms"][0]
    assert arm["n_examples"] == 3 and arm["n_crashed"] == 1


def test_backend_that_fails_to_start_reports_its_error() -> None:
    worker = BackendWorker("fake", {"no_such_option": 1})  # the constructor raises
    try:
        with pytest.raises(WorkerError, match="no_such_option") as info:
            worker.count_tokens(["a"])
        assert info.value.remote_type == "TypeError"
    finally:
        worker.close()


def test_worker_killed_between_requests_is_reported() -> None:
    worker = BackendWorker("fake", {})
    try:
        assert worker.count_tokens(["a"]) == [1]
        os.kill(worker.pid, signal.SIGKILL)
        worker.process.process.join(5)
        with pytest.raises(WorkerDied, match=r"SIGKILL.*out of memory"):
            worker.count_tokens(["a"])
    finally:
        worker.close()


def test_worker_dies_with_its_parent(tmp_path: Path) -> None:
    """A parent killed outright (SIGKILL, OOM) must not leave a worker decoding on."""
    pid_file = tmp_path / "worker.pid"
    script = (
        "import time\n"
        "from edgebench.backends.worker import BackendWorker\n"
        "w = BackendWorker('fake', {})\n"
        "w.count_tokens(['a'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(w.pid))\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.1)
    worker_pid = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"worker {worker_pid} outlived its parent")
