"""The deepjson task on the real SmolLM2: real outputs scored by depth, and an example
too long for --max-context recorded as skipped (counted by the model's own tokenizer)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edgebench.resources import resource_dir
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def run_dir(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("deepjson")
    lines = (resource_dir("data") / "deepjson" / "test.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[:3]]
    rows[1]["text"] = "\n\n".join([rows[1]["text"]] * 12)  # far over 1024 tokens
    dataset = folder / "three.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = folder / "run"
    done = subprocess.run(
        [sys.executable, "-m", "edgebench", "run", "--task", "deepjson", "--dataset",
         str(dataset), "--max-context", "1024", "--max-tokens", "48", "--threads", "2",
         "--verbose", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "depth" in done.stdout and "Key match" in done.stdout
    return out


def test_long_example_is_skipped_and_the_others_are_decoded(run_dir: Path) -> None:
    samples = final_samples(run_dir)
    assert [s["finish_reason"] == "skipped" for s in samples] == [False, True, False]
    skipped = samples[1]
    assert "does not fit --max-context (1024)" in skipped["error"]
    assert skipped["scores"] is None and skipped["prompt_tokens"] == 0
    for sample in (samples[0], samples[2]):
        assert sample["raw_output"].strip() and sample["prompt_tokens"] > 200
        scores = sample["scores"]["deepjson"]
        assert set(scores) == {"syntax", "key_matching", "strict", "valid_json"}
        # the leaf types of its ground truth
        assert sample["score_details"]["deepjson"]["element_scores"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["arms"][0]["n_ctx"] <= 1024
    assert manifest["models"][0]["plan"]["decoding"]["skipped_examples"] == 1


def test_summary_is_broken_down_by_depth_difficulty_domain_and_type(run_dir: Path) -> None:
    summary = json.loads((run_dir / "summary.json").read_text())
    (arm,) = summary["arms"]
    assert summary["task"] == "deepjson" and arm["n_skipped"] == 1
    task = arm["families"]["deepjson"]
    groups = task["groups"]
    assert set(groups["depth"]) == {"3", "4", "5"}
    assert groups["depth"]["4"]["n"] == 0 and groups["depth"]["4"]["n_skipped"] == 1
    assert groups["depth"]["4"]["key_matching"] is None  # nothing scored: no value, not 0
    assert set(groups["difficulty"]) == {"medium", "hard"}
    assert groups["domain"] and groups["element_type"]
    assert task["overall"]["n"] == 2 and task["overall"]["n_skipped"] == 1
    assert 0.0 <= task["overall"]["key_matching"] <= 1.0


def test_score_card_and_resume_read_the_real_run(run_dir: Path, tmp_path: Path) -> None:
    """`edgebench score` reproduces the summary (the skipped example stays unscored), the
    card shows the deepjson scores, and --resume of the finished run decodes nothing."""
    before = (run_dir / "summary.json").read_bytes()
    scored = subprocess.run(
        [sys.executable, "-m", "edgebench", "score", str(run_dir)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert (run_dir / "summary.json").read_bytes() == before
    card = tmp_path / "card.md"
    made = subprocess.run(
        [sys.executable, "-m", "edgebench", "card", str(run_dir), "--out", str(card)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "Key match" in card.read_text() and "Strict" in card.read_text()
    samples = final_samples(run_dir)
    resumed = subprocess.run(
        [sys.executable, "-m", "edgebench", "run", "--resume", str(run_dir)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert final_samples(run_dir) == samples
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["resumes"][-1]["samples_kept"] == 3
