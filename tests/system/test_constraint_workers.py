"""Constraint arms in real worker processes: an engine that crashes on one example costs
that example and a fresh worker goes on; after --max-crashes in a row the arm gives up,
the run says so in one error naming its folder, and the next arm still runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.worker import BackendWorker
from edgebench.errors import RunFailure
from edgebench.io import read_jsonl
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.constraints import examples
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

MODES = ("none", "gbnf", "mask")


def crashing_gbnf_factory(model: ModelUnderTest, mode: str) -> BackendWorker:
    options: dict[str, Any] = {"outputs": [RIGHT] * 3}
    if mode == "gbnf":
        options["crash_marker"] = "three"  # dies on the second example, e1
    return BackendWorker("fake", options)


def test_a_crashed_engine_costs_one_example_and_a_fresh_worker_goes_on(
    run_fake: RunFake,
) -> None:
    result = run_fake(examples=examples(), constraints=MODES, factory=crashing_gbnf_factory)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "completed" and result.worker_failures == 1
    arms = {a["constraint"]: a for a in manifest["arms"]}
    assert {m: a["status"] for m, a in arms.items()} == dict.fromkeys(MODES, "completed")
    gbnf = arms["gbnf"]
    assert gbnf["restarts"] == 1 and len(gbnf["reload_s"]) == 1
    (failure,) = gbnf["worker_failures"]
    assert failure["id"] == "e1" and failure["kind"] == "crashed"
    assert "SIGSEGV" in failure["error"] and "fake-model, gbnf" in failure["error"]
    assert arms["none"]["worker_failures"] == arms["mask"]["worker_failures"] == []
    samples = [s for s in read_jsonl(result.run_dir / "samples.jsonl") if s["constraint"] == "gbnf"]
    assert [(s["id"], s["finish_reason"]) for s in samples] == [
        ("e0", "stop"),
        ("e1", "crashed"),
        ("e2", "stop"),
    ]
    arm = result.summary.arm("fake-model", "gbnf")
    assert arm is not None
    assert arm.n_examples == 3 and arm.n_crashed == 1
    assert arm.perf.latency_s.n == 2  # nothing decoded: no timing
    assert arm.metrics["json_exact"] == pytest.approx(2 / 3)  # e0 and e2 are right


def test_an_arm_gives_up_after_max_crashes_and_the_next_arm_runs(
    run_fake: RunFake, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(RunFailure) as info:
        run_fake(
            examples=examples(), constraints=MODES, max_crashes=1, factory=crashing_gbnf_factory
        )
    message = str(info.value)
    assert "gave up on fake-model, gbnf after 1 failed" in message and "SIGSEGV" in message
    assert str(run_dir) in message and "\n" not in message
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "crashed"
    assert {a["constraint"]: a["status"] for a in manifest["arms"]} == {
        "none": "completed",
        "gbnf": "crashed",
        "mask": "completed",
    }
    summary = json.loads((run_dir / "summary.json").read_text())
    arms = {a["constraint"]: a for a in summary["arms"]}
    assert arms["gbnf"]["n_examples"] == 2  # e2 was never tried
    assert arms["mask"]["n_examples"] == 3
