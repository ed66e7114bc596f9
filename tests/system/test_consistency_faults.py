"""Consistency runs with real worker processes: a worker SIGKILLed mid-run costs one draw
(or, with --max-crashes 1, stops the run), and --resume with the same settings finishes it
with every (example, temperature, seed) exactly once, in run order; a generation that
hangs is recorded as `timeout` at --timeout and the run goes on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import BackendWorker
from edgebench.errors import RunFailure
from edgebench.io import read_jsonl
from edgebench.runner.jobs import ConsistencyRun
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.faults import echo_examples, kill_worker_after, with_marker
from tests.helpers.run_fake import RunFake

SAMPLED = [RIGHT, WRONG, '{"a": 1, "b": 2}', "no json"]
KIND = ConsistencyRun(samples=3, temperatures=(0.5, 0.8), seed=0)
N = 3  # examples: 2 temperatures x 3 examples x 3 draws = 18 jobs
RUN_ORDER = [
    (f"ex{i}", t, seed) for t in KIND.temperatures for i in range(N) for seed in KIND.seeds()
]


def draws(run_dir: Path) -> list[tuple[str, float, int]]:
    return [
        (s["id"], s["sampling"]["temperature"], s["sampling"]["seed"])
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]


def answers(run_dir: Path) -> list[tuple[Any, ...]]:
    return [
        (s["id"], s["sampling"], s["raw_output"], s["scores"], s["finish_reason"])
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]


def in_workers(pids: list[int], options: dict[str, Any]) -> Any:
    """A worker factory: each worker a real process (its pid appended to `pids`)."""

    def factory(model: Any, mode: str) -> BackendWorker:
        worker = BackendWorker("fake", options)
        pids.append(worker.pid)
        return worker

    return factory


@pytest.mark.parametrize("max_crashes", [1, 3])
def test_a_killed_worker_then_resume_gives_each_draw_once_in_run_order(
    run_fake: RunFake, tmp_path: Path, max_crashes: int
) -> None:
    reference = tmp_path / "reference"
    run_fake(FakeBackend(sampled=SAMPLED), examples=echo_examples(N), kind=KIND, out=reference)
    assert draws(reference) == RUN_ORDER

    out = tmp_path / "run"
    pids: list[int] = []
    settings = {"examples": echo_examples(N), "kind": KIND, "max_crashes": max_crashes}
    factory = in_workers(pids, {"sampled": SAMPLED})
    kill = kill_worker_after(7, pids)  # the 8th job finds its worker dead
    if max_crashes == 1:  # the arm gives up on its first failure: the run stops there
        with pytest.raises(
            RunFailure,
            match=rf"--max-crashes 1.*; 7 completed examples kept in {re.escape(str(out))}$",
        ):
            run_fake(factory=factory, progress=kill, **settings)
        assert len(draws(out)) == 8
    else:  # a fresh worker goes on with the rest
        first = run_fake(factory=factory, progress=kill, **settings)
        assert first.worker_failures == 1 and len(draws(out)) == 18
    lost = [s for s in read_jsonl(out / "samples.jsonl") if s["finish_reason"] == "crashed"]
    assert [(s["id"], s["sampling"]["seed"]) for s in lost] == [("ex2", 1)]
    assert "SIGKILL" in lost[0]["error"]
    previous = json.loads((out / "manifest.json").read_text())["status"]
    assert previous == ("crashed" if max_crashes == 1 else "completed")

    result = run_fake(factory=in_workers(pids, {"sampled": SAMPLED}), resume=True, **settings)
    assert draws(out) == RUN_ORDER  # each (example, temperature, seed) once, in run order
    assert answers(out) == answers(reference)  # the seeded draws, whichever worker drew
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["kind"] == "consistency"
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == previous
    assert entry["worker_failures_retried"] == 1
    assert entry["samples_kept"] == (7 if max_crashes == 1 else 17)
    assert result.worker_failures == 0 and result.summary.arms[0].n_crashed == 0
    assert result.summary.consistency is not None
    for row in result.summary.consistency.by_temperature.values():
        assert row.n_prompts == N and row.n_generations == N * 3


def test_a_hanging_generation_is_a_timeout_and_the_run_goes_on(
    run_fake: RunFake, tmp_path: Path
) -> None:
    pids: list[int] = []
    options = {"sampled": SAMPLED, "faults": {"HANG": "hang"}}
    result = run_fake(
        examples=with_marker(echo_examples(N), 1, "HANG"),
        kind=ConsistencyRun(samples=2, temperatures=(0.5,), seed=0),
        factory=in_workers(pids, options),
        timeout=1.0,
    )
    run_dir = tmp_path / "run"
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [(s["id"], s["sampling"]["seed"], s["finish_reason"]) for s in samples] == [
        ("ex0", 0, "json_complete"),
        ("ex0", 1, "json_complete"),
        ("ex1", 0, "timeout"),
        ("ex1", 1, "timeout"),
        ("ex2", 0, "json_complete"),
        ("ex2", 1, "json_complete"),
    ]
    assert samples[2]["error"] == (
        "no answer within --timeout 1 s on example 'ex1' (fake-model, none); worker killed"
    )
    assert len(pids) == 3  # each timeout killed its worker; a fresh one went on
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert [f["kind"] for f in manifest["arms"][0]["worker_failures"]] == ["timeout"] * 2
    assert result.worker_failures == 2
    arm = result.summary.arms[0]
    assert arm.n_timeout == 2 and arm.perf.latency_s.n == 4
    assert result.summary.consistency is not None
    # The lost draws are not the model's answers: ex1 has none to compare.
    prompts = result.summary.consistency.by_prompt["0.5"]
    assert sorted(prompts) == ["ex0", "ex2"] and prompts["ex0"].n == 2
    assert result.summary.consistency.by_temperature["0.5"].n_generations == 4
