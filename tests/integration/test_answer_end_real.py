"""The answer-ending policies on the real SmolLM2 (8 built-in examples): free answers stop
at their JSON, `mask+close` closes what `mask` leaves cut off, and the loop rule calls no
answer that ended by itself a loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from edgebench.backends.answer_end import LoopDetector, LoopRule
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.constraints import parse_modes
from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.request import RunRequest
from edgebench.tasks import get_task
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

LIMIT = 8


@pytest.fixture(scope="module")
def policy_run(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("answer_end") / "run"
    modes = tuple(parse_modes("none,mask,mask+close"))
    settings = RunSettings(limit=LIMIT, threads=2, out=out, constraints=modes)
    task = get_task("edgejson")
    examples, info = load_examples(task, settings)
    execute(RunRequest(settings, [model_under_test(None)], task, examples, info))
    return out


def arms(run: Path) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for sample in final_samples(run):
        grouped.setdefault(sample["constraint"], []).append(sample)
    return grouped


def test_free_answers_end_at_their_json_or_a_loop_and_spend_nothing_after(policy_run: Path) -> None:
    for sample in arms(policy_run)["none"]:
        assert sample["finish_reason"] in ("json_complete", "loop", "length", "stop")
        if sample["finish_reason"] == "json_complete":
            assert sample["tokens_after_answer"] == 0
            assert sample["answer_tokens"] == sample["output_tokens"]
            assert sample["parse"]["ok"]


def test_mask_close_closes_what_mask_leaves_cut_off(policy_run: Path) -> None:
    grouped = arms(policy_run)
    examples = {
        ex.id: ex for ex in load_examples(get_task("edgejson"), RunSettings(limit=LIMIT))[0]
    }
    for plain, closing in zip(grouped["mask"], grouped["mask+close"], strict=True):
        assert plain["id"] == closing["id"]
        # Greedy and the same budget: the closing arm wrote the same text up to the cut.
        text = closing["unclosed_output"] if closing["closed"] else closing["raw_output"]
        assert text == plain["raw_output"]
        if plain["finish_reason"] in ("length", "loop"):
            assert closing["closed"], closing["raw_output"]
        value = json.loads(closing["raw_output"])
        jsonschema.validate(value, examples[closing["id"]].schema)
    closed = [s for s in grouped["mask+close"] if s["closed"]]
    assert closed, "no mask answer was cut off in these examples: pick others"
    for sample in closed:
        assert 0 < sample["closing_tokens"] <= 256 and sample["tokens_after_answer"] == 0


def test_the_loop_rule_flags_no_answer_that_ended_by_itself(
    policy_run: Path, smollm2: Path
) -> None:
    backend = LlamaCppBackend(str(smollm2), 1)
    backend.load_vocab()
    ended = [
        s
        for samples in arms(policy_run).values()
        for s in samples
        if s["finish_reason"] in ("stop", "json_complete")
    ]
    assert ended
    for sample in ended:
        detector = LoopDetector(LoopRule())
        tokens = backend._tokenize(sample["raw_output"])[1:]
        assert not any(detector.push(t) for t in tokens), sample["raw_output"]
    backend.close()
