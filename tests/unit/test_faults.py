"""Workers that die or hang, full disks and models too big for memory: each is
reported with the model and example it hit, and the run goes on or stops cleanly."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.worker import BackendWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks.base import Example
from tests.unit.test_runner import EchoTask, examples, model

SCHEMA = {"type": "object"}


def with_marker(n: int, at: int, marker: str) -> list[Example]:
    exs = examples(n)
    ex = exs[at]
    exs[at] = Example(ex.id, f"{marker} {ex.text}", ex.schema_id, ex.schema, ex.expected, ex.groups)
    return exs


def run_with(
    tmp_path: Path, exs: list[Example], backend_options: dict[str, Any], **settings: Any
) -> Any:
    cfg = RunSettings(out=tmp_path / "run", **{"warmup": False, **settings})
    return execute(
        cfg,
        model(),
        EchoTask(),
        exs,
        {"path": "mem"},
        worker_factory=lambda mode: BackendWorker("fake", {"echo": True, **backend_options}),
    )


def outcomes(tmp_path: Path) -> list[tuple[str, str]]:
    return [(s["id"], s["finish_reason"]) for s in read_jsonl(tmp_path / "run" / "samples.jsonl")]


@pytest.mark.parametrize(
    ("fault", "reported"),
    [
        ("SIGSEGV", "was killed by SIGSEGV (Segmentation fault)"),
        ("SIGABRT", "was killed by SIGABRT (Aborted)"),
        ("SIGKILL", "was killed by SIGKILL (Killed) (out of memory?)"),
    ],
)
def test_a_worker_that_dies_costs_one_example(tmp_path: Path, fault: str, reported: str) -> None:
    result = run_with(tmp_path, with_marker(5, 2, "DIE"), {"faults": {"DIE": fault}})
    assert outcomes(tmp_path) == [
        ("ex0", "stop"),
        ("ex1", "stop"),
        ("ex2", "crashed"),
        ("ex3", "stop"),
        ("ex4", "stop"),
    ]
    lost = read_jsonl(tmp_path / "run" / "samples.jsonl")[2]
    assert lost["error"] == f"the model worker {reported} on example 'ex2' (fake-model, none)"
    assert lost["scores"]["json_exact"] == 0  # counted as a wrong answer, not dropped
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["arms"]["none"]["restarts"] == 1
    assert result.worker_failures == 1


def test_a_worker_that_hangs_is_killed_at_the_timeout_and_the_run_goes_on(tmp_path: Path) -> None:
    start = time.monotonic()
    run_with(tmp_path, with_marker(4, 1, "HANG"), {"faults": {"HANG": "hang"}}, timeout=1.0)
    assert time.monotonic() - start < 20
    assert outcomes(tmp_path) == [
        ("ex0", "stop"),
        ("ex1", "timeout"),
        ("ex2", "stop"),
        ("ex3", "stop"),
    ]
    lost = read_jsonl(tmp_path / "run" / "samples.jsonl")[1]
    assert lost["error"] == (
        "no answer within --timeout 1 s on example 'ex1' (fake-model, none); worker killed"
    )
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_timeout"] == 1 and summary["perf"]["latency_s"]["n"] == 3


def test_the_warmup_crashing_the_worker_is_survived(tmp_path: Path) -> None:
    # The warm-up decodes the first example's prompt, which kills the worker.
    run_with(tmp_path, with_marker(3, 0, "DIE"), {"faults": {"DIE": "SIGSEGV"}}, warmup=True)
    assert outcomes(tmp_path) == [("ex0", "crashed"), ("ex1", "stop"), ("ex2", "stop")]
    arm = json.loads((tmp_path / "run" / "manifest.json").read_text())["arms"]["none"]
    assert "SIGSEGV" in arm["warmup_error"] and arm["status"] == "completed"


@pytest.mark.parametrize("fault", ["SIGSEGV", "hang"])
def test_a_constraint_whose_compilation_kills_the_worker_is_unsupported(
    tmp_path: Path, fault: str
) -> None:
    exs = [
        Example(f"ex{i}", "w " * (i + 1), sid, SCHEMA | {"title": sid}, "w", {})
        for i, sid in enumerate(["good", "evil", "good"])
    ]
    run_with(tmp_path, exs, {"compile_faults": {"evil": fault}}, constraints=("gbnf",), timeout=1.0)
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert [(s["id"], s["constraint_status"]) for s in samples] == [
        ("ex0", "applied"),
        ("ex1", "unsupported"),
        ("ex2", "applied"),
    ]
    reason = "was killed by SIGSEGV" if fault == "SIGSEGV" else "took longer than --timeout 1 s"
    assert reason in samples[1]["error"]
    compile_records = json.loads((tmp_path / "run" / "manifest.json").read_text())["arms"]["gbnf"]
    assert [r["ok"] for r in compile_records["compile"]] == [True, False]


def test_too_many_failures_in_a_row_give_up_on_the_arm(tmp_path: Path) -> None:
    exs = [with_marker(6, i, "DIE")[i] if i in (1, 2) else ex for i, ex in enumerate(examples(6))]
    with pytest.raises(UserError, match=r"gave up on fake-model, none after 2 failed examples"):
        run_with(tmp_path, exs, {"faults": {"DIE": "SIGABRT"}}, max_crashes=2)
    assert outcomes(tmp_path) == [("ex0", "stop"), ("ex1", "crashed"), ("ex2", "crashed")]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "crashed" and manifest["arms"]["none"]["status"] == "crashed"


def test_a_model_too_big_for_memory_is_refused_with_both_figures(tmp_path: Path) -> None:
    huge = model()
    huge.size_bytes = 1 << 50
    huge.kv_bytes_per_token = 1 << 20
    cfg = RunSettings(out=tmp_path / "run", warmup=False)
    factory = lambda mode: BackendWorker("fake", {})  # noqa: E731
    with pytest.raises(UserError) as info:
        execute(cfg, huge, EchoTask(), examples(2), {"path": "mem"}, worker_factory=factory)
    message = str(info.value)
    assert message.startswith("not enough memory for fake-model: it needs about 1,073,742,")
    assert "(model file 1,073,741,824 MB + KV cache 256 MB at n_ctx 256) but " in message
    assert message.endswith(
        " MB is available; free memory, lower --n-ctx, or pass --ignore-memory-check"
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["memory_check"]["fits"] is False
    # The override runs it anyway (the fake needs no memory).
    cfg = RunSettings(out=tmp_path / "run2", warmup=False, check_memory=False)
    result = execute(cfg, huge, EchoTask(), examples(2), {"path": "mem"}, worker_factory=factory)
    assert result.summary["n_examples"] == 2


def fail_fsync_for(monkeypatch: pytest.MonkeyPatch, name_part: str, after: int = 0) -> list[str]:
    """Make fsync of files whose name contains `name_part` fail with ENOSPC (after
    `after` successful calls), as a full disk would."""
    import edgebench.io as io_module

    real_fsync = os.fsync
    calls: list[str] = []

    def fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        if name_part in target:
            calls.append(target)
            if len(calls) > after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(io_module.os, "fsync", fsync)
    return calls


def test_enospc_on_the_summary_write_leaves_the_old_summary_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_with(tmp_path, examples(3), {})
    run_dir = tmp_path / "run"
    before = (run_dir / "summary.json").read_bytes()
    fail_fsync_for(monkeypatch, ".summary.json.")
    cfg = RunSettings(out=run_dir, warmup=False)
    with pytest.raises(UserError) as info:
        execute(
            cfg,
            model(),
            EchoTask(),
            examples(3),
            {"path": "mem"},
            worker_factory=lambda mode: BackendWorker("fake", {"echo": True}),
            resume=True,
        )
    assert str(info.value) == (
        f"could not write summary.json in {run_dir}: No space left on device; the previous "
        f"summary.json is unchanged and samples.jsonl holds 3 examples; free space, then "
        f"continue with `edgebench run --resume {run_dir}`"
    )
    assert (run_dir / "summary.json").read_bytes() == before
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "manifest.json",
        "samples.jsonl",
        "summary.json",
    ]


def test_enospc_on_a_sample_append_stops_the_run_and_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_fsync_for(monkeypatch, "samples.jsonl", after=2)
    with pytest.raises(
        UserError, match=r"could not write to .*: No space left on device; 2 completed"
    ):
        run_with(tmp_path, examples(5), {})
    monkeypatch.undo()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    cfg = RunSettings(out=tmp_path / "run", warmup=False)
    execute(
        cfg,
        model(),
        EchoTask(),
        examples(5),
        {"path": "mem"},
        worker_factory=lambda mode: BackendWorker("fake", {"echo": True}),
        resume=True,
    )
    assert [i for i, _ in outcomes(tmp_path)] == [f"ex{i}" for i in range(5)]
