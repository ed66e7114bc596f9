"""Consistency runs (`execute(RunRequest(..., kind=ConsistencyRun(...)))`) with the fake backend in
this process: seeds and run order, the STED summary, Ctrl-C and --resume. Killed and hung
workers of a consistency run are in tests/system/test_consistency_faults.py."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import RunInterrupted
from edgebench.runner.jobs import ConsistencyRun
from edgebench.runner.prepare import load_examples
from edgebench.tasks import get_task
from edgebench.tasks.base import Example
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.faults import interrupt_after
from tests.helpers.run_fake import RunFake

ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]


def payloads(tmp_path: Path) -> list[Example]:
    """Two roundtrip examples, `payloads:1` and `payloads:2` (scored by `structure`)."""
    path = tmp_path / "payloads.jsonl"
    path.write_text('{"a": 1, "b": "x"}\n{"c": [1]}\n')
    examples, _ = load_examples(get_task("roundtrip"), RunSettings(task="roundtrip", dataset=path))
    return examples


def consistency(
    run_fake: RunFake,
    tmp_path: Path,
    backend: FakeBackend,
    out: str = "run",
    *,
    resume: bool = False,
    **kind: Any,
) -> Any:
    """A consistency run of the two payload examples into tmp_path/`out`."""
    return run_fake(
        backend,
        task_impl=get_task("roundtrip"),
        examples=payloads(tmp_path),
        kind=ConsistencyRun(**kind),
        out=tmp_path / out,
        resume=resume,
    )


def draws(run_dir: Path) -> list[tuple[float, str, int, int]]:
    return [
        (s["sampling"]["temperature"], s["id"], s["sampling"]["seed"], s["sampling"]["sample"])
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]


def test_every_prompt_is_sampled_with_seeds_at_every_temperature(
    run_fake: RunFake, tmp_path: Path
) -> None:
    backend = FakeBackend(sampled=ANSWERS)
    result = consistency(run_fake, tmp_path, backend, samples=3, temperatures=(0.2, 0.9), seed=10)
    # temperature, then example, then draw
    assert draws(result.run_dir) == [
        (t, f"payloads:{p}", 10 + n, n) for t in (0.2, 0.9) for p in (1, 2) for n in range(3)
    ]
    assert [(s.temperature, s.seed) for s in backend.settings] == [
        (t, seed) for t in (0.2, 0.9) for _ in (1, 2) for seed in (10, 11, 12)
    ]
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "consistency" and manifest["status"] == "completed"
    assert manifest["consistency"]["seeds"] == [10, 11, 12]
    assert manifest["consistency"]["temperatures"] == [0.2, 0.9]
    assert manifest["models"][0]["plan"]["decoding"]["strategy"] == "sampling"
    assert result.run_dir.name == "run"
    summary = result.summary
    assert summary.kind == "consistency" and summary.consistency is not None
    assert summary.consistency.parameters["steepness"] == 2.0  # STED's defaults
    assert summary.arms[0].n_examples == 12


def test_summary_per_prompt_and_temperature(run_fake: RunFake, tmp_path: Path) -> None:
    # Every generation answers the same: perfectly consistent.
    same = FakeBackend(sampled=['{"a":1,"b":"x"}'])
    result = consistency(run_fake, tmp_path, same, "same", samples=3, temperatures=(0.5,))
    assert result.summary.consistency is not None
    row = result.summary.consistency.by_temperature["0.5"]
    assert row.consistency == row.consistency_structural == 1.0
    assert row.n_prompts == 2 and row.n_generations == 6
    assert row.task_metrics["csa"] == pytest.approx(0.5)  # right for one of two prompts

    # Two answers that parse and one that does not: pairs 1.0, 0, 0.
    mixed = FakeBackend(sampled=['{"a":1}', "no json"])
    result = consistency(run_fake, tmp_path, mixed, "mixed", samples=4, temperatures=(0.5,))
    assert result.summary.consistency is not None
    prompts = result.summary.consistency.by_prompt["0.5"]
    assert sorted(prompts) == ["payloads:1", "payloads:2"]
    for prompt in prompts.values():
        ok = prompt.valid_json
        sims = [1.0] * (ok * (ok - 1) // 2) + [0.0] * (6 - ok * (ok - 1) // 2)
        mean = sum(sims) / 6
        sigma = math.sqrt(sum((s - mean) ** 2 for s in sims) / 6)
        assert prompt.consistency == pytest.approx(mean * math.exp(-2 * sigma / 0.5))


def test_sampled_records_are_scored_by_the_tasks_family(run_fake: RunFake) -> None:
    result = run_fake(
        FakeBackend(sampled=[RIGHT, WRONG]),
        n=2,
        kind=ConsistencyRun(samples=4, temperatures=(0.7,)),
    )
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    for sample in samples:
        assert sample["sampling"]["temperature"] == 0.7
        right = sample["raw_output"] == RIGHT
        assert sample["scores"]["edgejson"]["json_exact"] == int(right)
    assert result.summary.consistency is not None
    task = result.summary.consistency.by_temperature["0.7"].task_metrics
    exact = sum(s["raw_output"] == RIGHT for s in samples) / len(samples)
    assert task["n"] == 8 and task["json_exact"] == pytest.approx(exact)


def test_an_interrupted_consistency_run_resumes_to_each_draw_once_in_run_order(
    run_fake: RunFake, tmp_path: Path
) -> None:
    kind = {"samples": 3, "temperatures": (0.5, 0.8), "seed": 0}
    reference = consistency(run_fake, tmp_path, FakeBackend(sampled=ANSWERS), "ref", **kind)
    with pytest.raises(RunInterrupted) as stopped:
        run_fake(
            FakeBackend(sampled=ANSWERS),
            task_impl=get_task("roundtrip"),
            examples=payloads(tmp_path),
            kind=ConsistencyRun(**kind),  # type: ignore[arg-type]
            progress=interrupt_after(7),
        )
    out = tmp_path / "run"
    assert stopped.value.resume == f"edgebench consistency --resume {out}"
    assert len(draws(out)) == 7

    result = consistency(run_fake, tmp_path, FakeBackend(sampled=ANSWERS), resume=True, **kind)
    assert draws(out) == draws(reference.run_dir)
    outputs = [s["raw_output"] for s in read_jsonl(out / "samples.jsonl")]
    assert outputs == [s["raw_output"] for s in read_jsonl(reference.run_dir / "samples.jsonl")]
    manifest = json.loads((out / "manifest.json").read_text())
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == "interrupted" and entry["samples_kept"] == 7
    assert manifest["status"] == "completed"
    resumed, whole = result.summary.consistency, reference.summary.consistency
    assert resumed is not None and whole is not None
    # The same figures; the arms' timings (speed, wall clock) are the sessions' own.
    assert dataclasses.replace(resumed, arms=[]) == dataclasses.replace(whole, arms=[])
    assert [a.families for a in resumed.arms] == [a.families for a in whole.arms]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"samples": 4}, "the sampling plan differs"),
        ({"temperatures": (0.5,)}, "the sampling plan differs"),
        ({"seed": 1}, "the sampling plan differs"),
    ],
)
def test_resume_refuses_another_sampling_plan(
    run_fake: RunFake, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    kind = {"samples": 3, "temperatures": (0.5, 0.8), "seed": 0}
    consistency(run_fake, tmp_path, FakeBackend(sampled=ANSWERS), **kind)
    with pytest.raises(UserError, match=rf"cannot resume .*: {message}"):
        consistency(
            run_fake, tmp_path, FakeBackend(sampled=ANSWERS), resume=True, **{**kind, **change}
        )


def test_a_run_and_a_consistency_run_do_not_resume_as_each_other(
    run_fake: RunFake, tmp_path: Path
) -> None:
    run_fake([RIGHT], n=2, out=tmp_path / "greedy")
    with pytest.raises(
        UserError,
        match=r"it was made by `edgebench run`; continue it with `edgebench run --resume .*greedy`",
    ):
        run_fake(n=2, out=tmp_path / "greedy", kind=ConsistencyRun(), resume=True)
    run_fake(FakeBackend(sampled=[RIGHT]), n=2, out=tmp_path / "sampled", kind=ConsistencyRun())
    with pytest.raises(
        UserError,
        match=r"made by `edgebench consistency`; continue it with `edgebench consistency --resume ",
    ):
        run_fake(n=2, out=tmp_path / "sampled", resume=True)


def test_bad_sampling_plans_are_refused() -> None:
    with pytest.raises(UserError, match="at least 2"):
        ConsistencyRun(samples=1)
    with pytest.raises(UserError, match="not above 0"):
        ConsistencyRun(temperatures=(0.5, 0.0))
    with pytest.raises(UserError, match="at least one temperature"):
        ConsistencyRun(temperatures=())


def test_generations_lost_with_their_worker_are_left_out_of_the_comparison(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """A draw whose worker died is not one of the model's answers: the prompt is compared
    over the draws that were answered (and `--resume` would run the lost one again)."""
    from tests.helpers.faults import DyingWorker

    class DiesOnce(DyingWorker):
        def generate(self, prompt, settings, timeout=None):  # type: ignore[no-untyped-def]
            if settings.seed == 1 and not self.died:  # the first example's second draw
                self.died = True
                return super().generate(prompt, settings, timeout)
            return InProcessWorker.generate(self, prompt, settings, timeout)

    from edgebench.backends.worker import InProcessWorker

    worker = DiesOnce(FakeBackend(sampled=['{"a":1,"b":"x"}']))
    worker.died = False
    result = run_fake(
        task_impl=get_task("roundtrip"),
        examples=payloads(tmp_path),
        kind=ConsistencyRun(samples=3, temperatures=(0.5,)),
        factory=lambda model, mode: worker,
    )
    assert result.worker_failures == 1
    consistency_summary = result.summary.consistency
    assert consistency_summary is not None
    prompts = consistency_summary.by_prompt["0.5"]
    assert prompts["payloads:1"].n == 2 and prompts["payloads:2"].n == 3
    assert prompts["payloads:1"].consistency == prompts["payloads:2"].consistency == 1.0
    assert consistency_summary.by_temperature["0.5"].n_generations == 5
