"""A flaky meter on the real SmolLM2: `edgebench run --limit 3 --power-command CMD` whose
meter prints garbage (bytes that are not UTF-8) after two readings exits 0, writes its
summary, and the arm's energy says how many readings were lost and why."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.helpers.cli import edgebench_ok

pytestmark = pytest.mark.model


def test_a_meter_that_turns_to_garbage_costs_readings_not_the_run(
    smollm2: Path, tmp_path: Path
) -> None:
    calls = tmp_path / "calls"
    calls.write_text("0")
    meter = tmp_path / "meter.sh"
    meter.write_text(
        "#!/bin/sh\n"
        f"n=$(($(cat {calls}) + 1)); echo $n > {calls}\n"
        "if [ $n -gt 2 ]; then printf '\\377\\376 W\\n'; else echo 4.2 W; fi\n"
    )
    meter.chmod(meter.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / "run"
    edgebench_ok(
        "run",
        "--limit",
        "3",
        "--threads",
        "2",
        "--power-command",
        str(meter),
        "--idle-baseline",
        "0",
        "--out",
        str(out),
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    summary = json.loads((out / "summary.json").read_text())
    (arm,) = summary["arms"]
    energy = arm["energy"]
    assert energy["source"] == "command"
    reason = "printed bytes that are not UTF-8 text"
    assert energy["readings_lost"] > 0
    assert energy["lost_reasons"] == {reason: energy["readings_lost"]}
    assert energy["partial"].endswith(
        f"lost while the arm decoded: {reason} ({energy['readings_lost']})"
    )
    rows = [json.loads(line) for line in (out / "timeline.jsonl").read_text().splitlines()]
    assert [r["lost"] for r in rows if r["watts"] is None] and all(
        r["lost"] == reason for r in rows if r["watts"] is None
    )
