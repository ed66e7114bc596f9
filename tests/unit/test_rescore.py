"""`edgebench score`: re-scoring a stored run folder without a model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.prepare import load_examples
from edgebench.runner.rescore import rescore
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks import get_task
from tests.unit.test_cli_run_errors import assert_one_line_error, run_cli
from tests.unit.test_runner import model


def edgejson_run(tmp_path: Path, **settings: object) -> Path:
    """A fake-backend run over three built-in EdgeJSON examples (one right answer)."""
    task = get_task("edgejson")
    examples, info = load_examples(task, RunSettings())
    right = json.dumps(examples[1].expected)
    backend = FakeBackend(['{"site": "x"}', right.replace(" ", ""), "no"])
    result = execute(
        RunSettings(out=tmp_path / "run", warmup=False, limit=3, **settings),  # type: ignore[arg-type]
        model(),
        task,
        examples,
        info,
        worker_factory=lambda mode: InProcessWorker(backend),
    )
    return result.run_dir


def test_score_reproduces_the_summary_exactly(tmp_path: Path) -> None:
    run_dir = edgejson_run(tmp_path, metrics=("structure", "sted", "sobench"))
    summary = (run_dir / "summary.json").read_bytes()
    samples = (run_dir / "samples.jsonl").read_bytes()
    rescore(run_dir)
    assert (run_dir / "summary.json").read_bytes() == summary
    assert (run_dir / "samples.jsonl").read_bytes() == samples
    assert json.loads((run_dir / "manifest.json").read_text())["rescored"][0]["families"] == [
        "edgejson",
        "structure",
        "sted",
        "sobench",
    ]


def test_a_run_made_before_families_keeps_its_summary(tmp_path: Path) -> None:
    run_dir = edgejson_run(tmp_path)
    # What a run of the previous version looks like: no families anywhere.
    manifest = json.loads((run_dir / "manifest.json").read_text())
    del manifest["families"]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    summary = json.loads((run_dir / "summary.json").read_text())
    del summary["families"]
    for mode in summary["by_constraint"].values():
        del mode["families"]
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    before = (run_dir / "summary.json").read_text()
    rescore(run_dir)
    assert (run_dir / "summary.json").read_text() == before


def test_score_adds_families_with_parameters(tmp_path: Path) -> None:
    run_dir = edgejson_run(tmp_path)
    summary = rescore(
        run_dir, metrics=("sobench",), metric_params={"sobench": {"fuzzy_string_threshold": "0.5"}}
    ).summary
    assert list(summary["families"]) == ["edgejson", "sobench"]
    assert summary["families"]["sobench"]["parameters"]["fuzzy_string_threshold"] == 0.5
    assert summary["families"]["sobench"]["overall"]["fsma_exact"] == pytest.approx(1 / 3)
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert list(samples[0])[list(samples[0]).index("schema_errors") + 1] == "families"
    # Re-scored again without --metrics: the recorded families and parameters.
    again = rescore(run_dir).summary
    assert again["families"]["sobench"] == summary["families"]["sobench"]


def test_score_refuses_other_data(tmp_path: Path) -> None:
    run_dir = edgejson_run(tmp_path)
    data = tmp_path / "copy"
    recorded = json.loads((run_dir / "manifest.json").read_text())["dataset"]
    shutil.copytree(recorded["schemas"], data / "schemas")
    rows = Path(recorded["path"]).read_text()
    (data / "test.jsonl").write_text(rows.replace("North greenhouse", "South greenhouse"))
    with pytest.raises(UserError, match="not the dataset this run used"):
        rescore(run_dir, dataset=data / "test.jsonl")
    (data / "test.jsonl").write_text(rows)
    assert rescore(run_dir, dataset=data / "test.jsonl").summary["n_examples"] == 3


def test_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run_cli(capsys, "score", str(tmp_path / "missing"))
    assert_one_line_error(code, err, "no such run folder")
    run_dir = edgejson_run(tmp_path)
    code, err = run_cli(capsys, "score", str(run_dir), "--metrics", "sted")
    assert code == 0, err
    assert "sted" in json.loads((run_dir / "summary.json").read_text())["families"]
    (run_dir / "samples.jsonl").write_text("")
    code, err = run_cli(capsys, "score", str(run_dir))
    assert_one_line_error(code, err, "no samples")
