"""The run engine with the fake backend in-process: run folder contents, timings, token
budgets, the context size, refused folders, Ctrl-C."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.budget import plan_budget, size_context
from edgebench.tasks.base import Example
from tests.helpers.fakes import RIGHT, WRONG, examples
from tests.helpers.run_fake import RunFake


def test_run_folder_has_manifest_samples_and_summary(run_fake: RunFake) -> None:
    result = run_fake([RIGHT, WRONG, RIGHT])
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    summary = json.loads((result.run_dir / "summary.json").read_text())

    assert manifest["schema_version"] == summary["schema_version"] == "2.11"
    assert manifest["kind"] == "run" and manifest["status"] == "completed"
    assert manifest["task"] == {
        "name": "echo",
        "prompt_template": "{text}",
        "metric_family": "edgejson",
        "prompt_style": "default",
    }
    assert [m["label"] for m in manifest["models"]] == ["fake-model"]
    assert manifest["models"][0]["prompt_format"]["style"] == "completion"
    # the device block: read before the model loads; the runtime build from the first load
    assert manifest["device"]["logical_cores"] and manifest["device"]["threads_used"] == 2
    assert manifest["device"]["runtime"] == {"name": "fake"}
    assert [s["id"] for s in samples] == ["ex0", "ex1", "ex2"]
    assert all(s["model"] == "fake-model" and s["sampling"] is None for s in samples)
    assert [s["scores"]["edgejson"]["json_exact"] for s in samples] == [1, 0, 1]
    (arm,) = summary["arms"]
    assert (arm["model"], arm["constraint"], arm["status"]) == ("fake-model", "none", "completed")
    task = arm["families"]["edgejson"]
    assert task["role"] == "task"
    assert task["overall"]["json_exact"] == pytest.approx(2 / 3)
    assert task["groups"]["complexity"]["complex"]["n"] == 2
    assert task["groups"]["complexity"]["simple"]["json_exact"] == 0.0
    assert {"load_s", "peak_rss_mb", "ttft_s", "latency_s", "decode_tok_s"} <= set(arm["perf"])


def test_records_have_one_shape_whatever_the_number_of_models(run_fake: RunFake) -> None:
    from tests.helpers.fakes import fake_model

    one = run_fake([RIGHT])
    two = run_fake(
        [RIGHT], models=[fake_model("a"), fake_model("b")], out=one.run_dir.parent / "two"
    )
    for result in (one, two):
        manifest = json.loads((result.run_dir / "manifest.json").read_text())
        summary = json.loads((result.run_dir / "summary.json").read_text())
        assert sorted(manifest) == sorted(json.loads((one.run_dir / "manifest.json").read_text()))
        assert sorted(summary) == sorted(json.loads((one.run_dir / "summary.json").read_text()))
        assert all({"model", "constraint"} <= set(arm) for arm in manifest["arms"])
    summary = json.loads((two.run_dir / "summary.json").read_text())
    assert [(a["model"], a["constraint"]) for a in summary["arms"]] == [
        ("a", "none"),
        ("b", "none"),
    ]


def test_timings_come_from_the_backend_clock(run_fake: RunFake) -> None:
    # 2 output tokens, the second completes the JSON and ends the answer (no end token
    # sampled): 2 sampled, 1 decode step of 10 ms -> 100 tok/s.
    result = run_fake(FakeBackend([RIGHT], timings=FakeTimings(0.001, 0.01)), n=1)
    sample = read_jsonl(result.run_dir / "samples.jsonl")[0]
    prompt_tokens = len(sample["prompt"].split())
    assert sample["prompt_tokens"] == prompt_tokens
    assert sample["output_tokens"] == 2 and sample["generated_tokens"] == 2
    assert sample["finish_reason"] == "json_complete" and sample["tokens_after_answer"] == 0
    assert sample["timings"]["ttft_s"] == pytest.approx(prompt_tokens * 0.001)
    assert sample["timings"]["prefill_tok_s"] == pytest.approx(1000.0)
    assert sample["timings"]["decode_tok_s"] == pytest.approx(100.0)
    assert sample["timings"]["latency_s"] == pytest.approx(prompt_tokens * 0.001 + 0.01)
    perf = result.summary.arms[0].perf
    assert perf.decode_tok_s.p50 == pytest.approx(100.0)
    assert perf.output_tokens_total == 2


def test_token_limit_is_recorded(run_fake: RunFake) -> None:
    result = run_fake(["a b c d e f"], n=1, max_tokens=4)
    sample = read_jsonl(result.run_dir / "samples.jsonl")[0]
    assert sample["finish_reason"] == "length" and sample["hit_token_limit"] is True
    assert sample["raw_output"] == "a b c d"
    assert result.summary.arms[0].perf.hit_token_limit == 1


def test_context_is_sized_to_the_longest_prompt_plus_its_budget() -> None:
    assert size_context(examples(2), [10, 300], [100, 100], None, 8192) == 512
    # The longest prompt is not the one that needs the most room.
    assert size_context(examples(2), [200, 300], [400, 64], None, 8192) == 768
    assert size_context(examples(1), [10], [100], 1024, 8192) == 1024


def test_prompt_longer_than_context_names_the_example() -> None:
    with pytest.raises(UserError, match=r"example 'ex1': prompt of 900 tokens.*--n-ctx \(1000\)"):
        size_context(examples(2), [10, 900], [200, 200], 1000, 8192)
    with pytest.raises(UserError, match="model's context length"):
        size_context(examples(1), [8000], [512], None, 8192)


def _with_schema(example: Example, schema_id: str) -> Example:
    return Example(example.id, example.text, schema_id, {}, example.expected, example.groups)


def test_automatic_token_budget_is_sized_per_schema() -> None:
    exs = examples(4)
    exs = [_with_schema(exs[0], "short"), _with_schema(exs[1], "long")] + [
        _with_schema(e, "long") for e in exs[2:]
    ]
    budget = plan_budget(None, exs, [10, 324, 50, 200])
    # long: 324 * 1.25 + 32 = 437 -> 448; short: 10 -> at least 64
    assert budget.by_schema == {"long": 448, "short": 64}
    assert budget.for_example(exs[0]) == 64 and budget.for_example(exs[3]) == 448
    assert budget.largest() == 448 and budget.rule.startswith("auto, per schema")
    fixed = plan_budget(99, exs, [10, 324, 50, 200])
    assert fixed.for_example(exs[0]) == 99 and fixed.rule == "--max-tokens"


def test_examples_without_an_answer_get_the_fixed_unlabelled_budget() -> None:
    """Nothing to size a budget from (JSONSchemaBench): the benchmark's own 500 tokens,
    unless --max-tokens says otherwise; one labelled example brings the automatic rule."""
    unlabelled = [dataclasses.replace(e, expected=None) for e in examples(3)]
    budget = plan_budget(None, unlabelled, [1, 1, 1])
    assert budget.for_example(unlabelled[0]) == 500 and budget.by_schema is None
    assert budget.rule.startswith("fixed 500: no example has an expected answer")
    assert plan_budget(40, unlabelled, [1, 1, 1]).fixed == 40
    mixed = [*unlabelled, examples(1)[0]]
    assert plan_budget(None, mixed, [1, 1, 1, 1]).rule.startswith("auto, per schema")


def test_limit_takes_the_first_examples_and_budget_uses_the_whole_dataset(
    run_fake: RunFake,
) -> None:
    result = run_fake(n=5, limit=2)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert result.summary.arms[0].n_examples == 2
    decoding = manifest["models"][0]["plan"]["decoding"]
    assert decoding["max_tokens"] == 64 and decoding["max_tokens_by_schema"] == {"s": 64}
    assert decoding["strategy"] == "greedy" and decoding["max_tokens_rule"].startswith("auto")


def test_non_empty_output_folder_is_refused(run_fake: RunFake, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "old.txt").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        run_fake()


def test_a_model_named_twice_is_refused(run_fake: RunFake) -> None:
    from tests.helpers.fakes import fake_model

    with pytest.raises(UserError, match="'a' is named twice"):
        run_fake(models=[fake_model("a"), fake_model("a")])


def test_ctrl_c_keeps_completed_samples_and_marks_the_run_interrupted(
    run_fake: RunFake, tmp_path: Path
) -> None:
    from edgebench.runner.engine import RunInterrupted

    class InterruptedBackend(FakeBackend):
        def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
            if len(self.prompts) == 2:
                raise KeyboardInterrupt
            return super().generate(prompt, settings)

    with pytest.raises(RunInterrupted) as stopped:
        run_fake(InterruptedBackend([RIGHT] * 3), n=3)
    run_dir = tmp_path / "run"
    assert stopped.value.resume == f"edgebench run --resume {run_dir}"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert [s["id"] for s in read_jsonl(run_dir / "samples.jsonl")] == ["ex0", "ex1"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["arms"][0]["n_examples"] == 2
