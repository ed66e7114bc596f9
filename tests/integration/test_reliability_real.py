"""Reliability on the real SmolLM2: the public EdgeJSON `contact_info` schema, whose GBNF
llama.cpp cannot parse, and a run whose process is killed and then resumed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgebench.io import read_jsonl
from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.request import RunRequest
from edgebench.tasks import get_task
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]
# The public EdgeJSON v3 release lives in the workplace's shared/ folder, beside the
# checkout (main) or beside the worktrees' parent; it is read here, never copied.
_CANDIDATES = [REPO.parent / "shared", REPO.parent.parent / "shared"]
PUBLIC = next(
    (
        p / "datasets" / "edgejson_v3"
        for p in _CANDIDATES
        if (p / "datasets" / "edgejson_v3").is_dir()
    ),
    None,
)


@pytest.mark.skipif(PUBLIC is None, reason="public EdgeJSON v3 (shared/datasets) absent")
def test_contact_info_under_gbnf_is_recorded_and_the_run_completes(
    smollm2: Path, tmp_path: Path
) -> None:
    assert PUBLIC is not None
    rows = [json.loads(line) for line in (PUBLIC / "train.jsonl").read_text().splitlines() if line]
    contact = [r for r in rows if r["schema_id"] == "contact_info"][:2]
    other = [r for r in rows if r["schema_id"] == "location"][:1]
    dataset = tmp_path / "contact.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in contact + other))
    settings = RunSettings(
        dataset=dataset,
        schemas=PUBLIC / "schemas",
        threads=2,
        max_tokens=48,
        constraints=("gbnf",),
        out=tmp_path / "run",
    )
    task = get_task("edgejson")
    examples, info = load_examples(task, settings)
    result = execute(RunRequest(settings, [model_under_test(None)], task, examples, info))

    samples = final_samples(tmp_path / "run")
    assert [s["schema_id"] for s in samples] == ["contact_info", "contact_info", "location"]
    for sample in samples[:2]:
        # Refused up front (or, were the grammar not checked, a recorded crash): never
        # a lost run.
        assert sample["constraint_status"] == "unsupported" or sample["finish_reason"] == "crashed"
        assert sample["error"]
    print("contact_info under gbnf:", samples[0]["finish_reason"], "-", samples[0]["error"])
    assert samples[2]["constraint_status"] == "applied" and samples[2]["output_tokens"] > 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and result.summary.arms[0].n_examples == 3


def cli(*args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "edgebench",
        "run",
        "--limit",
        "3",
        "--max-tokens",
        "24",
        "--threads",
        "2",
        *args,
    ]


def test_a_killed_run_resumes_to_the_same_outputs(smollm2: Path, tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    subprocess.run(cli("--out", str(reference)), cwd=REPO, check=True, capture_output=True)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        cli("--out", str(out)), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    samples = out / "samples.jsonl"
    deadline = time.monotonic() + 120
    while not (samples.exists() and samples.read_text().count("\n") >= 1):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended early"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # the parent; its worker dies with it
    proc.wait(10)
    assert len(read_jsonl(samples)) < 3

    done = subprocess.run(
        [sys.executable, "-m", "edgebench", "run", "--resume", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr

    def outputs(run: Path) -> list[tuple[str, str, int]]:
        return [(s["id"], s["raw_output"], s["output_tokens"]) for s in final_samples(run)]

    assert outputs(out) == outputs(reference)
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["status"] == "completed" and manifest["resumes"][0]["previous_status"] == "running"
    )
