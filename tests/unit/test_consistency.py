"""`edgebench consistency` with the fake backend: seeds, pairwise STED, the summary."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.consistency import ConsistencySettings, execute_consistency
from edgebench.runner.prepare import load_examples
from edgebench.runner.rescore import rescore
from edgebench.runner.run import RunSettings
from edgebench.tasks import get_task
from tests.unit.test_cli_run_errors import assert_one_line_error, run_cli
from tests.unit.test_runner import model

ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]


def run_consistency(tmp_path: Path, backend: FakeBackend, **spec: object):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "payloads.jsonl"
    path.write_text('{"a": 1, "b": "x"}\n{"c": [1]}\n')
    task = get_task("roundtrip")
    settings = RunSettings(task="roundtrip", dataset=path, out=tmp_path / "run", warmup=False)
    examples, info = load_examples(task, settings)
    return execute_consistency(
        settings,
        ConsistencySettings(**spec),  # type: ignore[arg-type]
        model(),
        task,
        examples,
        info,
        worker_factory=lambda mode: InProcessWorker(backend),
    )


def test_every_prompt_is_sampled_with_seeds_at_every_temperature(tmp_path: Path) -> None:
    backend = FakeBackend(sampled=ANSWERS)
    result = run_consistency(tmp_path, backend, samples=3, temperatures=(0.2, 0.9), seed=10)
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert len(samples) == 2 * 3 * 2
    assert [(s["temperature"], s["id"], s["seed"]) for s in samples[:4]] == [
        (0.2, "payloads:1", 10),
        (0.2, "payloads:1", 11),
        (0.2, "payloads:1", 12),
        (0.2, "payloads:2", 10),
    ]
    assert {(s.temperature, s.seed) for s in backend.settings} == {
        (t, seed) for t in (0.2, 0.9) for seed in (10, 11, 12)
    }
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "consistency" and manifest["status"] == "completed"
    assert manifest["consistency"]["seeds"] == [10, 11, 12]
    assert manifest["consistency"]["sted_parameters"]["steepness"] == 2.0
    assert result.run_dir.name == "run"


def test_the_same_seed_gives_the_same_answer() -> None:
    backend = FakeBackend(sampled=ANSWERS)
    draws = [
        backend.generate("p", DecodeSettings(temperature=0.7, seed=seed)).text
        for seed in (1, 2, 1, 3, 1)
    ]
    assert draws[0] == draws[2] == draws[4]
    assert backend.generate("p", DecodeSettings()).text == "{}"  # greedy: the queue
    with pytest.raises(ValueError, match="temperature"):
        DecodeSettings(temperature=-0.1)
    with pytest.raises(ValueError, match="seed"):
        DecodeSettings(seed=-1)


def test_summary_per_prompt_and_temperature(tmp_path: Path) -> None:
    # Every generation answers the same: perfectly consistent.
    same = FakeBackend(sampled=['{"a":1,"b":"x"}'])
    summary = run_consistency(tmp_path / "same", same, samples=3, temperatures=(0.5,)).summary
    row = summary["by_temperature"]["0.5"]
    assert row["consistency"] == row["consistency_structural"] == 1.0
    assert row["n_prompts"] == 2 and row["n_generations"] == 6
    assert row["task_metrics"]["csa"] == pytest.approx(0.5)  # right for one of two prompts

    # Two answers that parse and one that does not: pairs 1.0, 0, 0.
    mixed = FakeBackend(sampled=['{"a":1}', "no json"])
    summary = run_consistency(tmp_path / "mixed", mixed, samples=4, temperatures=(0.5,)).summary
    for prompt in summary["by_prompt"]["0.5"].values():
        ok = prompt["valid_json"]
        sims = [1.0] * (ok * (ok - 1) // 2) + [0.0] * (6 - ok * (ok - 1) // 2)
        mean = sum(sims) / 6
        sigma = math.sqrt(sum((s - mean) ** 2 for s in sims) / 6)
        assert prompt["consistency"] == pytest.approx(mean * math.exp(-2 * sigma / 0.5))


def test_rescoring_a_consistency_run_reproduces_it(tmp_path: Path) -> None:
    result = run_consistency(tmp_path, FakeBackend(sampled=ANSWERS), samples=3, temperatures=(0.3,))
    before = (result.run_dir / "summary.json").read_text()
    rescore(result.run_dir)
    assert (result.run_dir / "summary.json").read_text() == before
    changed = rescore(result.run_dir, metric_params={"sted": {"steepness": "0"}}).summary
    for prompt in changed["by_prompt"]["0.3"].values():
        assert prompt["consistency"] == pytest.approx(prompt["sted_mean"])


def test_bad_settings() -> None:
    with pytest.raises(UserError, match="at least 2"):
        ConsistencySettings(samples=1)
    with pytest.raises(UserError, match="not above 0"):
        ConsistencySettings(temperatures=(0.5, 0.0))


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
def test_cli_errors(capsys: pytest.CaptureFixture[str], args: list[str], fragment: str) -> None:
    code, err = run_cli(capsys, "consistency", *args)
    assert_one_line_error(code, err, fragment)


def test_softmax_draw_is_seeded_and_never_takes_a_refused_token() -> None:
    import numpy as np

    from edgebench.backends.decoding import softmax_draw

    scores = np.array([1.0, 2.0, -np.inf, 1.5])
    first = [softmax_draw(1.0, 7)(scores) for _ in range(3)]
    assert len(set(first)) == 1  # a fresh generator per request: the same first draw
    draw = softmax_draw(1.0, 7)
    picks = [draw(scores) for _ in range(300)]
    assert 2 not in picks and set(picks) == {0, 1, 3}
    cold = softmax_draw(0.01, 7)
    assert {cold(scores) for _ in range(50)} == {1}  # near zero temperature: the best
    assert softmax_draw(1.0, 0)(np.array([-np.inf, -np.inf])) == 0
