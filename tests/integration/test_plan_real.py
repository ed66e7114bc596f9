"""`edgebench plan run` on the real SmolLM2: a plan of 2 constraint modes x --limit 2 runs
each cell as its own `edgebench run` process into the plan folder, records the device name
it was given, and the same command again runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import edgebench_ok
from tests.helpers.run_folder import final_samples, manifest_of

pytestmark = pytest.mark.model

PLAN = """\
models = ["smollm2-135m-instruct"]
constraints = ["none", "mask"]
threads = [2]

[run]
limit = 2
max_tokens = 48
idle_baseline = 0
"""


def test_a_two_mode_plan_runs_each_cell_once_on_the_real_model(
    smollm2: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "results"
    done = edgebench_ok("plan", "run", str(plan), "--out", str(out), "--device-name", "bench-vm")
    assert "plan: 2 of 2 cells done" in done.stderr
    for mode in ("none", "mask"):
        run = out / "runs" / f"smollm2-135m-instruct.edgejson.{mode}.t2.r1"
        manifest = manifest_of(run)
        assert manifest["status"] == "completed"
        assert manifest["settings"]["constraints"] == [mode]
        assert manifest["settings"]["threads"] == 2
        assert manifest["arms"][0]["memory"]["peak_rss_mb"] > 0  # its own worker
        assert len(final_samples(run)) == 2
        assert (out / "logs" / f"{run.name}.log").is_file()
    status = json.loads((out / "plan-status.json").read_text())
    assert status["device_name"] == "bench-vm"
    assert [c["status"] for c in status["cells"]] == ["done", "done"]

    again = edgebench_ok("plan", "run", str(plan), "--out", str(out))
    assert again.stderr.count(": done\n") == 2 and "running" not in again.stderr
