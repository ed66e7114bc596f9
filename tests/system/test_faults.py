"""Worker processes that die or hang (the fake backend misbehaving on a prompt marker, in
real worker processes): each costs the example it hit, reported with the model and the
example, and the run goes on; too many in a row end the arm, and the run with a
`RunFailure` naming its folder."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.worker import BackendWorker
from edgebench.errors import RunFailure
from edgebench.io import read_jsonl
from edgebench.runner.engine import RunResult
from edgebench.tasks.base import Example
from tests.helpers.fakes import OBJECT_SCHEMA
from tests.helpers.faults import echo_examples, with_marker
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of, summary_of


def run_with(
    run_fake: RunFake, exs: list[Example], backend_options: dict[str, Any], **settings: Any
) -> RunResult:
    """A run whose every worker is a real process with the fake backend answering each
    prompt's first line (the examples' own JSON objects)."""
    options = {"echo": True, **backend_options}
    return run_fake(
        examples=exs, factory=lambda model, mode: BackendWorker("fake", options), **settings
    )


def assert_outcomes(run_dir: Path, *finish_reasons: str) -> None:
    """The run's samples are ex0, ex1, ... in order, one per finish reason given."""
    samples = read_jsonl(run_dir / "samples.jsonl")
    expected = [(f"ex{i}", reason) for i, reason in enumerate(finish_reasons)]
    assert [(s["id"], s["finish_reason"]) for s in samples] == expected


@pytest.mark.parametrize(
    ("fault", "reported"),
    [
        ("SIGSEGV", "was killed by SIGSEGV (Segmentation fault)"),
        ("SIGABRT", "was killed by SIGABRT (Aborted)"),
        ("SIGKILL", "was killed by SIGKILL (Killed) (out of memory?)"),
    ],
)
def test_a_worker_that_dies_costs_one_example(
    run_fake: RunFake, tmp_path: Path, fault: str, reported: str
) -> None:
    exs = with_marker(echo_examples(5), 2, "DIE")
    result = run_with(run_fake, exs, {"faults": {"DIE": fault}})
    run_dir = tmp_path / "run"
    assert_outcomes(
        run_dir, "json_complete", "json_complete", "crashed", "json_complete", "json_complete"
    )
    samples = read_jsonl(run_dir / "samples.jsonl")
    lost = samples[2]
    assert lost["error"] == f"the model worker {reported} on example 'ex2' (fake-model, none)"
    # Counted as a wrong answer, not dropped; the others are scored as they answered.
    assert [s["scores"]["edgejson"]["json_exact"] for s in samples] == [0, 1, 0, 0, 1]
    manifest = manifest_of(run_dir)
    assert manifest["status"] == "completed"
    arm = manifest["arms"][0]
    assert arm["restarts"] == 1 and len(arm["reload_s"]) == 1
    assert arm["worker_failures"] == [
        {"index": 2, "id": "ex2", "kind": "crashed", "error": lost["error"]}
    ]
    assert result.worker_failures == 1 and result.summary.arms[0].n_crashed == 1


def test_a_worker_that_hangs_is_killed_at_the_timeout_and_the_run_goes_on(
    run_fake: RunFake, tmp_path: Path
) -> None:
    start = time.monotonic()
    exs = with_marker(echo_examples(4), 1, "HANG")
    run_with(run_fake, exs, {"faults": {"HANG": "hang"}}, timeout=1.0)
    assert time.monotonic() - start < 60  # the hang did not hold the run
    run_dir = tmp_path / "run"
    assert_outcomes(run_dir, "json_complete", "timeout", "json_complete", "json_complete")
    lost = read_jsonl(run_dir / "samples.jsonl")[1]
    assert lost["error"] == (
        "no answer within --timeout 1 s on example 'ex1' (fake-model, none); worker killed"
    )
    arm = summary_of(run_dir)["arms"][0]
    assert arm["n_timeout"] == 1 and arm["perf"]["latency_s"]["n"] == 3
    assert manifest_of(run_dir)["arms"][0]["worker_failures"][0]["kind"] == "timeout"


def test_the_warmup_crashing_the_worker_is_survived(run_fake: RunFake, tmp_path: Path) -> None:
    # The warm-up decodes the first example's prompt, which kills the worker.
    exs = with_marker(echo_examples(3), 0, "DIE")
    run_with(run_fake, exs, {"faults": {"DIE": "SIGSEGV"}}, warmup=True)
    run_dir = tmp_path / "run"
    assert_outcomes(run_dir, "crashed", "json_complete", "json_complete")
    arm = manifest_of(run_dir)["arms"][0]
    assert "SIGSEGV" in arm["warmup_error"] and arm["status"] == "completed"


@pytest.mark.parametrize(
    ("mode", "fault"), [("gbnf", "SIGSEGV"), ("gbnf", "hang"), ("outlines", "hang")]
)
def test_a_constraint_whose_compilation_kills_the_worker_is_unsupported_once(
    run_fake: RunFake, tmp_path: Path, mode: str, fault: str
) -> None:
    """A GBNF compile that kills the worker, or a compile (the Outlines index of issue 25)
    still running at --compile-timeout: the schema is unsupported with the reason, its
    later examples are not compiled again, and the run goes on."""
    exs = [
        Example(f"ex{i}", "w " * (i + 1), sid, OBJECT_SCHEMA | {"title": sid}, {"a": 1}, {})
        for i, sid in enumerate(["good", "evil", "good", "evil"])
    ]
    start = time.monotonic()
    run_with(
        run_fake,
        exs,
        {"compile_faults": {"evil": fault}},
        constraints=(mode,),
        compile_timeout=1.0,
    )
    assert time.monotonic() - start < 30  # one compile timeout paid, not one per example
    run_dir = tmp_path / "run"
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [(s["id"], s["constraint_status"], s["finish_reason"]) for s in samples] == [
        ("ex0", "applied", "stop"),
        ("ex1", "unsupported", "unsupported"),
        ("ex2", "applied", "stop"),
        ("ex3", "unsupported", "unsupported"),
    ]
    reason = "killed by SIGSEGV" if fault == "SIGSEGV" else "no answer within --compile-timeout 1 s"
    assert reason in samples[1]["error"] and samples[3]["error"] == samples[1]["error"]
    assert {s["compile_outcome"] for s in samples[1::2]} == {"crashed"}
    arm = manifest_of(run_dir)["arms"][0]
    assert [r["ok"] for r in arm["compile"]] == [True, False]
    assert len(arm["reload_s"]) == 1  # the worker was replaced once, for the one compile
    assert arm["status"] == "completed" and arm["worker_failures"] == []


def test_too_many_failures_in_a_row_give_up_on_the_arm_and_fail_the_run(
    run_fake: RunFake, tmp_path: Path
) -> None:
    exs = with_marker(with_marker(echo_examples(6), 1, "DIE"), 2, "DIE")
    run_dir = tmp_path / "run"
    with pytest.raises(RunFailure) as info:
        run_with(run_fake, exs, {"faults": {"DIE": "SIGABRT"}}, max_crashes=2)
    message = str(info.value)
    assert message.startswith(
        "gave up on fake-model, none after 2 failed examples in a row (--max-crashes 2); "
        "last: the model worker was killed by SIGABRT (Aborted) on example 'ex2'"
    )
    assert message.endswith(f"; 1 completed examples kept in {run_dir}")
    assert "\n" not in message
    assert_outcomes(run_dir, "json_complete", "crashed", "crashed")
    manifest = manifest_of(run_dir)
    assert manifest["status"] == "crashed" and manifest["arms"][0]["status"] == "crashed"


def test_a_worker_that_crashes_on_every_example_fails_the_run_naming_its_folder(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """Every example kills the worker (and so does the warm-up): the arm gives up after
    --max-crashes examples, and the run ends with a RunFailure, not a UserError."""
    run_dir = tmp_path / "run"
    with pytest.raises(RunFailure) as info:
        run_with(run_fake, echo_examples(5), {"crash_marker": '{"a"'}, warmup=True)
    assert str(info.value).endswith(f"; 0 completed examples kept in {run_dir}")
    assert "after 3 failed examples in a row (--max-crashes 3)" in str(info.value)
    assert_outcomes(run_dir, "crashed", "crashed", "crashed")
    summary = summary_of(run_dir)
    assert summary["status"] == "crashed" and summary["arms"][0]["n_crashed"] == 3
