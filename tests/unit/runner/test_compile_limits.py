"""A schema whose compile runs past `--compile-timeout` or kills the worker is unsupported
once per (engine, schema): recorded with the reason, never compiled again in the arm nor
in a resumed session, and its later examples cost nothing. The real-process versions
(a hanging and a SIGSEGV compile) are in tests/system/test_faults.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.constraints.spec import ConstraintRequest
from edgebench.io import read_jsonl
from edgebench.isolation import WorkerDied, WorkerTimeout
from edgebench.runfolder.records import DEFAULT_COMPILE_TIMEOUT, RunSettings
from edgebench.tasks.base import Example
from tests.helpers.fakes import OBJECT_SCHEMA
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of

# schema id -> what compiling it does to the worker (an injected fault)
FAULTS = {"slow": "timeout", "segv": "SIGSEGV"}
ORDER = ["good", "slow", "segv", "slow", "good", "segv", "slow"]


class FaultyCompileWorker(InProcessWorker):
    """The in-process fake, except that compiling a schema named in FAULTS raises what a
    real worker would report for it; every compile attempt is logged in `calls`."""

    def __init__(self, calls: list[tuple[str, float | None]]) -> None:
        super().__init__(FakeBackend(echo=True))
        self.calls = calls

    def compile_constraint(self, request: ConstraintRequest, timeout: float | None = None) -> Any:
        self.calls.append((request.label, timeout))
        fault = FAULTS.get(request.label)
        if fault == "timeout":
            raise WorkerTimeout("compile_constraint", timeout or 0.0)
        if fault == "SIGSEGV":
            raise WorkerDied(-11, "compile_constraint")
        return super().compile_constraint(request, timeout)


def schema_examples() -> list[Example]:
    return [
        Example(f"ex{i}", '{"a": 1}', sid, OBJECT_SCHEMA | {"title": sid}, {"a": 1}, {})
        for i, sid in enumerate(ORDER)
    ]


def test_the_default_compile_timeout_is_recorded() -> None:
    assert RunSettings().compile_timeout == DEFAULT_COMPILE_TIMEOUT == 60.0


def test_a_long_or_crashing_compile_is_unsupported_once_per_schema(
    run_fake: RunFake, tmp_path: Path
) -> None:
    calls: list[tuple[str, float | None]] = []
    run_fake(
        examples=schema_examples(),
        factory=lambda model, mode: FaultyCompileWorker(calls),
        constraints=("gbnf",),
        compile_timeout=5.0,
        timeout=100.0,
    )
    # One attempt each for the faulty schemas; `good` is compiled twice (first, cached)
    # and again in each worker started after a killed one (it is needed there).
    attempts = [label for label, _ in calls]
    assert attempts.count("slow") == 1 and attempts.count("segv") == 1
    assert {timeout for _, timeout in calls} == {5.0}  # --compile-timeout, not --timeout
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    outcome = [(s["schema_id"], s["finish_reason"], s["compile_outcome"]) for s in samples]
    assert outcome == [
        ("good", "stop", "compiled"),
        ("slow", "unsupported", "crashed"),
        ("segv", "unsupported", "crashed"),
        ("slow", "unsupported", "crashed"),
        ("good", "stop", "compiled"),
        ("segv", "unsupported", "crashed"),
        ("slow", "unsupported", "crashed"),
    ]
    slow = {s["error"] for s in samples if s["schema_id"] == "slow"}
    assert slow == {
        "unsupported by gbnf: no answer within --compile-timeout 5 s compiling it; worker killed"
    }
    segv = {s["error"] for s in samples if s["schema_id"] == "segv"}
    assert segv == {
        "unsupported by gbnf: the model worker was killed by SIGSEGV (Segmentation fault) "
        "compiling it"
    }
    manifest = manifest_of(tmp_path / "run")
    assert manifest["settings"]["compile_timeout"] == 5.0
    arm = manifest["arms"][0]
    assert [(r["label"], r["ok"]) for r in arm["compile"]] == [
        ("good", True),
        ("slow", False),
        ("segv", False),
    ]
    assert arm["status"] == "completed" and arm["worker_failures"] == []
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    coverage = summary["arms"][0]["coverage"]["overall"]
    assert (coverage["compiled"], coverage["refused"], coverage["crashed"]) == (2, 0, 5)


def test_a_resumed_arm_takes_the_crashed_verdicts_from_its_record(
    run_fake: RunFake, tmp_path: Path
) -> None:
    calls: list[tuple[str, float | None]] = []
    run_fake(
        examples=schema_examples()[:3],
        factory=lambda model, mode: FaultyCompileWorker(calls),
        constraints=("gbnf",),
    )
    calls.clear()
    run_fake(
        examples=schema_examples(),
        factory=lambda model, mode: FaultyCompileWorker(calls),
        constraints=("gbnf",),
        resume=True,
    )
    assert {label for label, _ in calls} == {"good"}  # slow and segv are not tried again
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert [s["finish_reason"] for s in samples[3:]] == ["unsupported", "stop"] + [
        "unsupported"
    ] * 2


@pytest.mark.parametrize("value", ["0", "-1", "abc"])
def test_a_bad_compile_timeout_is_a_one_line_error(value: str) -> None:
    from typer.testing import CliRunner

    from edgebench.cli.app import app

    result = CliRunner().invoke(app, ["run", "--compile-timeout", value])
    assert result.exit_code == 2
    assert "--compile-timeout" in result.output and "Traceback" not in result.output
