"""`edgebench consistency` in this process (the fake model, see tests/helpers/cli_model.py):
`--resume DIR` continues an interrupted consistency run, refusing a folder of another kind
or another sampling plan. (Bad options: test_bad_options.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend
from edgebench.io import read_jsonl
from tests.helpers.cli import assert_one_line_error
from tests.helpers.cli_model import RoundtripCli, assert_resume_names_the_command, roundtrip_cli
from tests.helpers.run_folder import manifest_of, summary_of

ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]
PLAN = ("--samples", "3", "--temperatures", "0.5,0.8", "--seed", "0")


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
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    """Two roundtrip payloads."""
    return roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1, "b": "x"}, {"c": [1]}])


def draws(run_dir: Path) -> list[tuple[float, str, int]]:
    return [
        (s["sampling"]["temperature"], s["id"], s["sampling"]["seed"])
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]


def test_consistency_resume_finishes_an_interrupted_run(cli: RoundtripCli) -> None:
    out = cli.out
    cli.answer_with(InterruptAt(6, sampled=ANSWERS))
    code, err = cli.start("consistency", *PLAN)
    assert code == 130, err
    assert f"continue with: edgebench consistency --resume {out}" in " ".join(err.split())
    assert len(draws(out)) == 5  # the warm-up, then 5 generations recorded

    backend = FakeBackend(sampled=ANSWERS)
    cli.answer_with(backend)
    code, err = cli.resume("consistency")
    assert code == 0, err
    # Every (example, temperature, seed) once, in run order: temperature, example, draw.
    assert draws(out) == [
        (t, f"payloads:{p}", seed) for t in (0.5, 0.8) for p in (1, 2) for seed in range(3)
    ]
    assert len(backend.prompts) == 1 + 7  # a warm-up, then only the missing draws
    manifest = manifest_of(out)
    assert manifest["status"] == "completed" and manifest["kind"] == "consistency"
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == "interrupted" and entry["samples_kept"] == 5
    summary = summary_of(out)
    assert summary["consistency"]["by_temperature"]["0.8"]["n_generations"] == 6


def test_consistency_resume_refuses_another_sampling_plan(cli: RoundtripCli) -> None:
    cli.answer_with(FakeBackend(sampled=ANSWERS))
    code, err = cli.start("consistency", *PLAN)
    assert code == 0, err
    code, err = cli.resume("consistency", "--samples", "4")
    assert_one_line_error(code, err, f"cannot resume {cli.out}", "the sampling plan differs")


def test_consistency_resume_of_a_run_folder_names_edgebench_run(cli: RoundtripCli) -> None:
    cli.answer_with(FakeBackend(default_output='{"a": 1, "b": "x"}'))
    assert_resume_names_the_command(cli, "run")


def test_consistency_samples_a_seeded_subset_with_its_seed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--sample and --stratify as in `run`; --seed seeds the subset and the first draw."""
    payloads = [{"a": 1}, {"b": {"c": 2}}, {"d": 3}, {"e": {"f": 4}}]
    cli = roundtrip_cli(capsys, monkeypatch, tmp_path, payloads)
    cli.answer_with(FakeBackend(sampled=ANSWERS))
    code, err = cli.start(
        "consistency", "--samples", "2", "--temperatures", "0.5", "--seed", "4",
        "--sample", "2", "--stratify", "depth",
    )  # fmt: skip
    assert code == 0, err
    sample = manifest_of(cli.out)["dataset"]["sample"]
    assert sample["n"] == 2 and sample["stratify"] == "depth" and sample["seed"] == 4
    ran = {example_id for _, example_id, _ in draws(cli.out)}
    assert ran == set(sample["ids"]) and len(ran) == 2
    depths = {s["groups"]["depth"] for s in read_jsonl(cli.out / "samples.jsonl")}
    assert depths == {"1", "2"}  # one of each depth
    assert {seed for _, _, seed in draws(cli.out)} == {4, 5}
