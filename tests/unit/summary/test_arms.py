"""Per-arm figures: a skipped arm has none (not zeros); skipped examples are counted
apart from every family's `n`."""

from __future__ import annotations

import json

from edgebench.tasks.base import Example
from tests.helpers.fakes import OBJECT_SCHEMA, RIGHT, examples, fake_model
from tests.helpers.run_fake import RunFake


def test_an_arm_the_runtime_cannot_run_has_no_figures(run_fake: RunFake) -> None:
    result = run_fake(
        [RIGHT] * 3, models=[fake_model(backend="onnx")], constraints=("none", "gbnf")
    )
    skipped = result.summary.arm("fake-model", "gbnf")
    assert skipped is not None and skipped.status == "skipped" and skipped.skip_reason
    assert skipped.families == {} and skipped.metrics == {} and skipped.noncompliant is None
    decoded = result.summary.arm("fake-model", "none")
    assert decoded is not None and decoded.metrics["json_exact"] == 1.0


def test_skipped_examples_are_counted_apart_in_every_group(run_fake: RunFake) -> None:
    long = Example(
        "long", " ".join(["word"] * 5000), "s", OBJECT_SCHEMA, {"a": 1}, {"complexity": "simple"}
    )
    result = run_fake([RIGHT], examples=[*examples(2), long], max_context=512)
    arm = result.summary.arms[0]
    assert arm.n_examples == 3 and arm.n_skipped == 1
    task = arm.families["edgejson"]
    assert task.overall["n"] == 2 and task.overall["n_skipped"] == 1
    assert task.groups["complexity"]["simple"] == {
        **task.groups["complexity"]["simple"],
        "n": 1,
        "n_skipped": 1,
    }
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["arms"][0]["perf"]["finish_reasons"] == {"json_complete": 2, "skipped": 1}
