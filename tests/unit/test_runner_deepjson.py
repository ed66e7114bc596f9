"""A deepjson run with the fake backend: by_depth, by_difficulty, by_domain and
by_element_type in summary.json, the budget by depth, and examples too long for
--max-context recorded as skipped (never truncated, never a crash)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.report.table import render_summary
from edgebench.runner.budget import plan_context
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks.base import Example
from edgebench.tasks.deepjson import DeepJSONTask, example_from_row
from tests.unit.test_runner import examples as echo_examples
from tests.unit.test_runner import model as fake_model


def deep_schema(depth: int) -> dict[str, Any]:
    """An object nested `depth - 1` times ending in a string and a boolean."""
    leaf: dict[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "ok": {"type": "boolean"}},
        "required": ["name", "ok"],
    }
    for _ in range(depth - 2):
        leaf = {"type": "object", "properties": {"inner": leaf}, "required": ["inner"]}
    return leaf


def deep_value(depth: int, name: str) -> dict[str, Any]:
    value: dict[str, Any] = {"name": name, "ok": True}
    for _ in range(depth - 2):
        value = {"inner": value}
    return value


def dataset(words: dict[int, int] | None = None) -> list[Example]:
    """One example per depth 3..5; `words` makes some texts long."""
    words = words or {}
    result = []
    for depth, domain in ((3, "movie"), (4, "plant"), (5, "movie")):
        text = f"the name is n{depth} " + "pad " * words.get(depth, 0)
        row = {
            "id": f"d{depth}",
            "schema": deep_schema(depth),
            "json": deep_value(depth, f"n{depth}"),
            "text": text,
            "category": domain,
            "true_depth": depth,
        }
        result.append(example_from_row(row, f"row {depth}", f"d{depth}"))
    return result


def run(tmp_path: Path, outputs: list[str], exs: list[Example], **settings: Any):
    cfg = RunSettings(out=tmp_path / "run", warmup=False, task="deepjson", **settings)
    backend = FakeBackend(outputs)
    result = execute(
        cfg,
        fake_model(),
        DeepJSONTask(),
        exs,
        {"path": "mem"},
        worker_factory=lambda mode: InProcessWorker(backend),
    )
    return result, backend


def test_summary_breaks_scores_down_by_depth_difficulty_domain_and_element_type(tmp_path):
    exs = dataset()
    outputs = [
        json.dumps(deep_value(3, "n3")),  # perfect
        json.dumps(deep_value(4, "wrong")),  # valid, one leaf wrong
        "not json",
    ]
    result, _ = run(tmp_path, outputs, exs)
    summary = result.summary
    assert list(summary["metrics"]) == ["n", "syntax", "key_matching", "strict", "valid_json"]
    # the task's scores are its metric family's, as `edgebench score` and cards read them
    family = summary["families"]["deepjson"]
    assert family["role"] == "task" and family["overall"] == summary["metrics"]
    assert family["by_depth"] == summary["by_depth"]
    assert summary["by_depth"]["3"] == {
        "n": 1,
        "syntax": 1.0,
        "key_matching": 1.0,
        "strict": 1.0,
        "valid_json": 1.0,
    }
    assert summary["by_depth"]["4"]["key_matching"] == pytest.approx(0.5)
    assert summary["by_depth"]["5"]["syntax"] == 0.0
    assert summary["by_difficulty"]["medium"]["n"] == 2
    assert summary["by_difficulty"]["hard"]["strict"] == 0.0
    assert summary["by_domain"]["movie"]["n"] == 2
    # strings: right in d3, wrong in d4, unparsed in d5; booleans right in d3 and d4
    assert summary["by_element_type"]["string"] == {
        "n": 3,
        "fields": 3,
        "key_matching": pytest.approx(1 / 3),
    }
    assert summary["by_element_type"]["boolean"]["key_matching"] == pytest.approx(2 / 3)
    assert summary["metrics"]["key_matching"] == pytest.approx(0.5)


def test_budget_is_per_depth_not_per_example(tmp_path):
    result, _ = run(tmp_path, [], dataset())
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert set(manifest["decoding"]["max_tokens_by_schema"]) == {"depth-3", "depth-4", "depth-5"}
    assert manifest["task"]["name"] == "deepjson"
    assert "Keep the schema's hierarchy" in manifest["task"]["prompt_template"]


def test_examples_over_max_context_are_skipped_with_the_reason(tmp_path):
    exs = dataset(words={4: 600})  # d4's prompt is far longer than the others
    result, backend = run(
        tmp_path, [json.dumps(deep_value(3, "n3"))], exs, max_context=512, max_tokens=64
    )
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    skipped = [s for s in samples if s["finish_reason"] == "skipped"]
    assert [s["id"] for s in skipped] == ["d4"]
    assert skipped[0]["scores"] is None and skipped[0]["raw_output"] == ""
    assert "does not fit --max-context (512)" in skipped[0]["error"]
    assert len(backend.prompts) == 2  # d4 was never sent to the model, not truncated
    summary = result.summary
    assert summary["n_skipped"] == 1 and summary["metrics"]["n"] == 2
    assert summary["by_depth"]["4"] == {
        "n": 0,
        "n_skipped": 1,
        "syntax": 0.0,
        "key_matching": 0.0,
        "strict": 0.0,
        "valid_json": 0.0,
    }
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["decoding"]["skipped_examples"] == 1
    assert manifest["arms"]["none"]["n_ctx"] <= 512
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(render_summary(summary))
    shown = console.export_text()
    assert "1 examples skipped" in shown and "Key match" in shown
    assert shown.index("medium") < shown.index("hard") < shown.index("overall")


def test_context_plan_rules():
    exs = echo_examples(3)
    plan = plan_context(exs, [100, 900, 200], [64, 64, 64], n_ctx=None, max_context=512,
                        n_ctx_train=8192)  # fmt: skip
    assert plan.skipped == {1: "prompt of 900 tokens + max tokens 64 = 964 does not fit "
                               "--max-context (512)"}  # fmt: skip
    assert plan.n_ctx == 512  # 264 rounded up to 256s, capped at the limit
    # the model's own context length is a limit too, and the smaller one wins
    plan = plan_context(exs, [100, 900, 200], [64, 64, 64], n_ctx=None, max_context=None,
                        n_ctx_train=512)  # fmt: skip
    assert "the model's context length (512)" in plan.skipped[1]
    with pytest.raises(UserError, match=r"no example fits --max-context \(128\)"):
        plan_context(exs, [100, 900, 200], [64] * 3, n_ctx=None, max_context=128,
                     n_ctx_train=8192)  # fmt: skip
    with pytest.raises(UserError, match="--n-ctx and --max-context exclude each other"):
        plan_context(exs, [1, 1, 1], [1] * 3, n_ctx=512, max_context=512, n_ctx_train=8192)


def test_compare_shows_deepjson_scores(tmp_path):
    from edgebench.report.compare import compare_rows, load_run_summary

    result, _ = run(tmp_path, [json.dumps(deep_value(3, "n3"))], dataset())
    row = compare_rows([load_run_summary(result.run_dir)])[0]
    assert row["metrics.key_matching"] == pytest.approx(1 / 3)
    assert row["metrics.strict"] == pytest.approx(1 / 3) and "metrics.json_exact" not in row


def test_skipped_examples_are_complete_for_resume_and_stay_unscored_by_score(tmp_path):
    """A skipped example is a finished record: --resume keeps it (never decodes it) and
    `edgebench score` leaves it unscored, reproducing the summary."""
    from edgebench.runner.prepare import load_examples
    from edgebench.runner.rescore import rescore

    task = DeepJSONTask()
    exs, info = load_examples(task, RunSettings(task="deepjson"))
    # Fake tokens are words: pick a limit between the shortest and the longest prompts.
    words = sorted(len(task.build_prompt(e).user.split()) for e in exs[:6])
    limit = (words[1] + words[-1]) // 2 + 64
    out = tmp_path / "run"

    class StopsAtThe4th(FakeBackend):  # Ctrl-C on the 4th decode, example 5
        def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
            if not resume and len(self.prompts) == 3:
                raise KeyboardInterrupt
            return super().generate(prompt, settings)

    def go(outputs: list[str]) -> Any:
        backend = StopsAtThe4th(outputs)
        cfg = RunSettings(
            out=out, warmup=False, task="deepjson", limit=6, max_context=limit, max_tokens=64
        )
        return execute(
            cfg,
            fake_model(),
            task,
            exs,
            info,
            worker_factory=lambda mode: InProcessWorker(backend),
            resume=resume,
        ), backend

    answers = [json.dumps(e.expected) for e in exs[:6]]
    resume = False
    with pytest.raises(KeyboardInterrupt):  # stopped after 5 records, skips among them
        go(answers)
    first = read_jsonl(out / "samples.jsonl")
    kept_skips = [s["id"] for s in first if s["finish_reason"] == "skipped"]
    assert len(first) == 5 and kept_skips
    resume = True
    result, backend = go(answers[5:])
    samples = read_jsonl(out / "samples.jsonl")
    skipped = [s["id"] for s in samples if s["finish_reason"] == "skipped"]
    assert skipped == kept_skips and [s["index"] for s in samples] == list(range(6))
    assert len(backend.prompts) == 1  # only the one example never recorded was decoded
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["resumes"][0]["samples_kept"] == 5
    assert result.summary["n_skipped"] == len(skipped)
    assert result.summary["metrics"]["n"] == 6 - len(skipped)

    from edgebench.report import facts, rundata

    shown = facts.metric_names(rundata.arms(rundata.load_run(out)))  # cards and reports
    assert shown == ["syntax", "key_matching", "strict", "valid_json"]
    before = (out / "summary.json").read_bytes()
    rescore(out)
    assert (out / "summary.json").read_bytes() == before
    again = read_jsonl(out / "samples.jsonl")
    assert [s["scores"] for s in again if s["finish_reason"] == "skipped"] == [None] * len(skipped)


def test_an_arm_whose_jobs_are_all_skipped_starts_no_worker():
    from edgebench.runner.arm import Arm, ArmSpec, ExampleJob

    exs = dataset()
    started: list[int] = []
    samples: list[dict[str, Any]] = []

    def make_worker():
        started.append(1)
        return InProcessWorker(FakeBackend([]))

    record: dict[str, Any] = {}
    arm = Arm(
        ArmSpec(fake_model(), "mask"),
        task=DeepJSONTask(),
        settings=RunSettings(task="deepjson"),
        n_ctx=512,
        stop=(),
        make_worker=make_worker,
        record=record,
        on_sample=samples.append,
    )
    arm.run([ExampleJob(i, e, "prompt", 64, "too long") for i, e in enumerate(exs)])
    assert started == [] and [s["finish_reason"] for s in samples] == ["skipped"] * 3
    assert all(s["error"] == "skipped: too long" for s in samples)


def test_deepjson_family_scores_like_the_task_and_adds_to_other_tasks():
    from edgebench.metrics import get_family
    from edgebench.scoring.parse import parse_json_output

    family = get_family("deepjson")
    exs = dataset()
    for raw in (json.dumps(deep_value(3, "n3")), json.dumps(deep_value(3, "x")), "{", ""):
        own = DeepJSONTask().score(raw, exs[0])["scores"]
        assert family.score(parse_json_output(raw), exs[0].expected, exs[0].schema) == own
    assert family.describe()["scores"] == ["syntax", "key_matching", "strict", "valid_json"]


def test_a_deepjson_run_made_before_families_reads_back_with_its_own_scores(tmp_path):
    from edgebench.report.rundata import load_run

    result, _ = run(tmp_path, [json.dumps(deep_value(3, "n3"))], dataset())
    manifest_path = result.run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["families"]  # what a run of the previous version recorded
    manifest_path.write_text(json.dumps(manifest))
    summary = load_run(result.run_dir).summary
    assert list(summary["metrics"]) == ["n", "syntax", "key_matching", "strict", "valid_json"]
    assert summary["metrics"]["strict"] == pytest.approx(1 / 3)
