"""`edgebench consistency` in this process (the fake model, see tests/helpers/cli_model.py):
bad options end in one line, and `--resume DIR` continues an interrupted consistency run,
refusing a folder of another kind or another sampling plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.io import read_jsonl
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.cli_model import use_fake_model

ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]
PLAN = ("--samples", "3", "--temperatures", "0.5,0.8", "--seed", "0")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--temperatures", "0.2,hot"], "'hot' is not a number"),
        (["--temperatures", "0"], "not above 0"),
        (["--constraint", "none,gbnf"], "one constraint mode"),
        (["--metric-param", "sobench.fuzzy_string_threshold=0.9"], "only sted"),
        (["--metric-param", "sted.lambda=1"], "no parameter 'lambda'"),
    ],
)
def test_bad_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    code, err = run_cli(capsys, "consistency", *args)
    assert_one_line_error(code, err, fragment)


class InterruptAt(FakeBackend):
    """Ctrl-C arrives during the `at`-th generation (the warm-up counts)."""

    def __init__(self, at: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.at = at

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        if len(self.prompts) == self.at:
            raise KeyboardInterrupt
        return super().generate(prompt, settings)


@pytest.fixture
def payloads(tmp_path: Path) -> Path:
    path = tmp_path / "payloads.jsonl"
    path.write_text('{"a": 1, "b": "x"}\n{"c": [1]}\n')
    return path


def backend_of(monkeypatch: pytest.MonkeyPatch, backend: FakeBackend) -> None:
    use_fake_model(monkeypatch, lambda model, mode: InProcessWorker(backend))


def draws(run_dir: Path) -> list[tuple[float, str, int]]:
    return [
        (s["sampling"]["temperature"], s["id"], s["sampling"]["seed"])
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]


def test_consistency_resume_finishes_an_interrupted_run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    payloads: Path,
) -> None:
    out = tmp_path / "run"
    backend_of(monkeypatch, InterruptAt(6, sampled=ANSWERS))
    start = ("consistency", "--task", "roundtrip", "--dataset", str(payloads), "--out", str(out))
    code, err = run_cli(capsys, *start, *PLAN)
    assert code == 130, err
    assert f"continue with: edgebench consistency --resume {out}" in " ".join(err.split())
    assert len(draws(out)) == 5  # the warm-up, then 5 generations recorded

    backend = FakeBackend(sampled=ANSWERS)
    backend_of(monkeypatch, backend)
    code, err = run_cli(capsys, "consistency", "--resume", str(out))
    assert code == 0, err
    # Every (example, temperature, seed) once, in run order: temperature, example, draw.
    assert draws(out) == [
        (t, f"payloads:{p}", seed) for t in (0.5, 0.8) for p in (1, 2) for seed in range(3)
    ]
    assert len(backend.prompts) == 1 + 7  # a warm-up, then only the missing draws
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["kind"] == "consistency"
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == "interrupted" and entry["samples_kept"] == 5
    summary = json.loads((out / "summary.json").read_text())
    assert summary["consistency"]["by_temperature"]["0.8"]["n_generations"] == 6


def test_consistency_resume_refuses_another_sampling_plan(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    payloads: Path,
) -> None:
    out = tmp_path / "run"
    backend_of(monkeypatch, FakeBackend(sampled=ANSWERS))
    start = ("consistency", "--task", "roundtrip", "--dataset", str(payloads), "--out", str(out))
    code, err = run_cli(capsys, *start, *PLAN)
    assert code == 0, err
    code, err = run_cli(capsys, "consistency", "--resume", str(out), "--samples", "4")
    assert_one_line_error(code, err, f"cannot resume {out}", "the sampling plan differs")


def test_consistency_resume_of_a_run_folder_names_edgebench_run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    payloads: Path,
) -> None:
    out = tmp_path / "run"
    backend_of(monkeypatch, FakeBackend(default_output='{"a": 1, "b": "x"}'))
    start = ("run", "--task", "roundtrip", "--dataset", str(payloads), "--out", str(out))
    code, err = run_cli(capsys, *start)
    assert code == 0, err
    before = (out / "samples.jsonl").read_bytes()
    code, err = run_cli(capsys, "consistency", "--resume", str(out))
    assert_one_line_error(code, err, f"continue it with `edgebench run --resume {out}`")
    assert (out / "samples.jsonl").read_bytes() == before  # nothing touched
    assert json.loads((out / "manifest.json").read_text())["resumes"] == []
