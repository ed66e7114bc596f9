"""`--parse reference` (and `--prompt reference`) is the benchmark's pipeline end to end:
no answer-ending policy its scorer never saw (no stop at the first complete JSON, no loop
detection), recorded in the manifest's settings, so the answers it scores are the answers
the benchmark would score.

The oracle is DeepJSONEval's own extraction (utils.py `json_evaluation_new`), written out
here: `json.loads(output.split("```json")[-1].split("```")[0])`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.io import read_jsonl
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.cli_model import use_fake_model
from tests.helpers.run_folder import manifest_of

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
TRUTH = {"name": "Ada", "age": 36}
WRONG = {"name": "Bob", "age": 1}

# A draft in one ```json block, then the answer in a second: the reference takes the last.
TWO_BLOCKS = f"```json\n{json.dumps(WRONG)}\n```\nCorrected:\n```json\n{json.dumps(TRUTH)}\n```"
# Bare JSON, then prose: the reference decodes the whole text, which is not JSON.
JSON_THEN_PROSE = f"{json.dumps(TRUTH)}\nThe person is Ada, aged 36."


def reference_strict(output: str) -> int:
    """DeepJSONEval's extraction, verbatim, then an exact match (Strict)."""
    try:
        value = json.loads(output.split("```json")[-1].split("```")[0])
    except json.JSONDecodeError:
        return 0
    return int(value == TRUTH)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    row = {"schema": SCHEMA, "text": "Ada is 36.", "json": TRUTH, "true_depth": 3}
    path = tmp_path / "deep.jsonl"
    path.write_text("".join(json.dumps({**row, "id": f"r{i}"}) + "\n" for i in range(2)))
    return path


def run_two(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dataset: Path,
    out: Path,
    *args: str,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Both answers through `edgebench run` on the fake model: (manifest, samples)."""
    backend = FakeBackend([TWO_BLOCKS, JSON_THEN_PROSE])
    use_fake_model(monkeypatch, lambda model, mode: InProcessWorker(backend))
    base = ("run", "--task", "deepjson", "--dataset", str(dataset), "--out", str(out))
    code, err = run_cli(capsys, *base, "--no-warmup", *args)
    assert code == 0, err
    return manifest_of(out), read_jsonl(out / "samples.jsonl")


def test_reference_parsing_scores_both_answers_as_the_reference_scorer(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dataset: Path,
    tmp_path: Path,
) -> None:
    manifest, samples = run_two(
        capsys,
        monkeypatch,
        dataset,
        tmp_path / "ref",
        "--parse",
        "reference",
        "--prompt",
        "reference",
    )
    assert [s["raw_output"] for s in samples] == [TWO_BLOCKS, JSON_THEN_PROSE]  # never cut
    assert [s["finish_reason"] for s in samples] == ["stop", "stop"]
    strict = [s["scores"]["deepjson"]["strict"] for s in samples]
    assert strict == [reference_strict(TWO_BLOCKS), reference_strict(JSON_THEN_PROSE)] == [1, 0]
    assert [s["parse"]["path"] for s in samples] == ["fenced_json", "none"]
    settings = manifest["settings"]
    assert (settings["parse"], settings["stop_at_json"], settings["loop_detection"]) == (
        "reference",
        False,
        False,
    )
    answer_end = manifest["models"][0]["plan"]["decoding"]["answer_end"]
    assert answer_end["stop_at_json"] is False and answer_end["loop_detection"] is None


def test_lenient_parsing_keeps_edgebenchs_stop_at_the_json(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dataset: Path,
    tmp_path: Path,
) -> None:
    """The contrast: a deployment's stop at the first complete JSON scores the first block
    and the bare JSON, which the benchmark never sees alone."""
    manifest, samples = run_two(capsys, monkeypatch, dataset, tmp_path / "lenient")
    assert [s["finish_reason"] for s in samples] == ["json_complete", "json_complete"]
    assert [s["scores"]["deepjson"]["strict"] for s in samples] == [0, 1]
    assert manifest["settings"]["stop_at_json"] is True
    # Re-scored as the reference extracts, the cut answers are still what was decoded,
    # and `score` says so in one warning line.
    code, err = run_cli(capsys, "score", str(tmp_path / "lenient"), "--parse", "reference")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 2 answer(s) of this run stopped where their first JSON value closed "
        "(settings.stop_at_json): scored as decoded, not as the benchmark would see the "
        "whole answer (a run with --parse reference decodes whole answers)"
    ]


def test_the_reference_prompt_alone_is_the_reference_pipeline_too(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dataset: Path,
    tmp_path: Path,
) -> None:
    """A run with the benchmark's prompt keeps whole answers, so `edgebench score --parse
    reference` later scores what the benchmark would."""
    manifest, samples = run_two(
        capsys, monkeypatch, dataset, tmp_path / "prompt", "--prompt", "reference"
    )
    assert [s["raw_output"] for s in samples] == [TWO_BLOCKS, JSON_THEN_PROSE]
    settings = manifest["settings"]
    assert (settings["parse"], settings["stop_at_json"], settings["loop_detection"]) == (
        "lenient",
        False,
        False,
    )
    code, err = run_cli(capsys, "score", str(tmp_path / "prompt"), "--parse", "reference")
    assert code == 0, err
    rescored = read_jsonl(tmp_path / "prompt" / "samples.jsonl")
    assert [s["scores"]["deepjson"]["strict"] for s in rescored] == [1, 0]


@pytest.mark.parametrize("flag", ["--stop-at-json", "--loop-detection"])
@pytest.mark.parametrize(("option", "own"), [("--parse", "lenient"), ("--prompt", "default")])
def test_a_policy_the_reference_lacks_is_refused_with_a_reference_option(
    capsys: pytest.CaptureFixture[str], dataset: Path, flag: str, option: str, own: str
) -> None:
    args = ["run", "--task", "deepjson", "--dataset", str(dataset), option, "reference"]
    code, err = run_cli(capsys, *args, flag)
    assert_one_line_error(
        code,
        err,
        f"{flag}: {option} reference runs the benchmark's own pipeline, which has no such "
        f"policy (drop {flag}, or use {option} {own} for edgebench's own pipeline)",
    )


def test_a_task_without_a_published_scorer_keeps_the_policies(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """roundtrip has no reference scorer: `--parse reference` is lenient there, policies
    included."""
    use_fake_model(monkeypatch, lambda model, mode: InProcessWorker(FakeBackend()))
    out = tmp_path / "rt"
    args = ("run", "--task", "roundtrip", "--limit", "1", "--no-warmup", "--out", str(out))
    code, err = run_cli(capsys, *args, "--parse", "reference")
    assert code == 0, err
    assert manifest_of(out)["settings"]["stop_at_json"] is True
