"""Ctrl-C at the stages of a run the other tests do not reach: while a model loads (the
first arm's worker, and a later arm's), while an output is scored, while the meter's log
is copied into the folder at the end. Each ends as every Ctrl-C does: `RunInterrupted`
(exit 130 at the command line), the manifest `interrupted` with the resume hint, the
completed examples kept, and `--resume` finishes the run with each example once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.io import read_jsonl
from edgebench.runner import engine, samples
from edgebench.runner.engine import RunInterrupted
from edgebench.system.power import PowerChoice
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake


def manifest(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "manifest.json").read_text())


def loads_interrupted_at(call: int):
    """A worker factory whose `call`-th model load is cut by Ctrl-C."""
    calls: list[int] = []
    backend = FakeBackend([RIGHT] * 8)

    def factory(model: object, mode: str) -> InProcessWorker:
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return InProcessWorker(backend)

    return factory


@pytest.mark.parametrize(
    ("call", "kept"), [(1, 0), (2, 2)], ids=["the first model load", "a later arm's model load"]
)
def test_ctrl_c_while_a_model_loads(
    run_fake: RunFake, tmp_path: Path, call: int, kept: int
) -> None:
    with pytest.raises(RunInterrupted) as info:
        run_fake(n=2, constraints=("none", "json"), factory=loads_interrupted_at(call))
    run_dir = tmp_path / "run"
    assert info.value.n_samples == kept
    assert info.value.resume == f"edgebench run --resume {run_dir}"
    assert manifest(run_dir)["status"] == "interrupted"
    run_fake([RIGHT] * 4, n=2, constraints=("none", "json"), resume=True)
    assert manifest(run_dir)["status"] == "completed"
    assert len(read_jsonl(run_dir / "samples.jsonl")) == 4


def test_ctrl_c_while_an_output_is_scored(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = samples.score_output
    calls: list[int] = []

    def score_output(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # not a scorer's failure: the user's stop
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(samples, "score_output", score_output)
    with pytest.raises(RunInterrupted) as info:
        run_fake([RIGHT] * 3, n=3)
    run_dir = tmp_path / "run"
    assert info.value.n_samples == 1
    assert manifest(run_dir)["status"] == "interrupted"
    monkeypatch.setattr(samples, "score_output", real)
    run_fake([RIGHT] * 3, n=3, resume=True)
    assert [s["id"] for s in read_jsonl(run_dir / "samples.jsonl")] == ["ex0", "ex1", "ex2"]


def test_ctrl_c_while_the_meters_log_is_copied(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy reads the whole log once at the end (10^7 rows: tens of seconds): a
    Ctrl-C there keeps every example and the run resumes to its end."""
    t0 = time.time()
    log = tmp_path / "meter.csv"
    log.write_text("time,watts\n" + "".join(f"{t0 - 5 + 0.5 * i:.3f},4.0\n" for i in range(60)))
    real = engine.copy_power_log
    calls: list[int] = []

    def copy(*args: object, **kwargs: object) -> int:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "copy_power_log", copy)
    run = {"n": 2, "power": PowerChoice(None, log, None), "power_log": log, "idle_baseline": 0}
    with pytest.raises(RunInterrupted) as info:
        run_fake([RIGHT] * 2, **run)
    run_dir = tmp_path / "run"
    assert info.value.n_samples == 2
    assert manifest(run_dir)["status"] == "interrupted"
    result = run_fake([RIGHT] * 2, **run, resume=True)
    assert manifest(run_dir)["status"] == "completed"
    assert result.summary.arms[0].n_examples == 2
