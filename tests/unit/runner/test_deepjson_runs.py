"""DeepJSONEval runs with the fake backend: the deepjson family's figures by depth,
difficulty, domain and element type in summary.json, the budget by depth, and examples
too long for --max-context recorded as skipped (never truncated, never a crash): kept by
--resume, left unscored by `edgebench score`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from edgebench.analysis import rundata
from edgebench.backends.fake import FakeBackend
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.metrics import get_family
from edgebench.report import facts
from edgebench.report.compare import compare_rows
from edgebench.report.coverage import coverage_rows
from edgebench.report.table import render_summary
from edgebench.rescore import rescore
from edgebench.runfolder.records import RunSettings
from edgebench.runner.budget import plan_budget, plan_context
from edgebench.runner.engine import RunInterrupted
from edgebench.runner.prepare import load_examples
from edgebench.scoring.parse import parse_json_output
from edgebench.summary import load_run
from edgebench.tasks.base import Example
from edgebench.tasks.deepjson import DeepJSONTask, example_from_row
from tests.helpers.fakes import example as echo_example
from tests.helpers.fakes import examples as echo_examples
from tests.helpers.run_fake import RunFake

SCORES = ["syntax", "key_matching", "strict", "valid_json"]


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


def deep_run(
    run_fake: RunFake, outputs: list[str], exs: list[Example], **settings: Any
) -> tuple[Any, FakeBackend]:
    backend = FakeBackend(outputs)
    return run_fake(backend, task_impl=DeepJSONTask(), examples=exs, **settings), backend


def test_summary_breaks_scores_down_by_depth_difficulty_domain_and_element_type(
    run_fake: RunFake,
) -> None:
    outputs = [
        json.dumps(deep_value(3, "n3")),  # perfect
        json.dumps(deep_value(4, "wrong")),  # valid, one leaf wrong
        "not json",
    ]
    result, _ = deep_run(run_fake, outputs, dataset())
    assert result.summary.task_family == "deepjson"
    arm = result.summary.arms[0]
    assert list(arm.metrics) == ["n", *SCORES]
    family = arm.families["deepjson"]
    assert family.role == "task" and list(arm.families) == ["deepjson"]
    groups = family.groups
    assert groups["depth"]["3"] == {
        "n": 1,
        "syntax": 1.0,
        "key_matching": 1.0,
        "strict": 1.0,
        "valid_json": 1.0,
    }
    assert groups["depth"]["4"]["key_matching"] == pytest.approx(0.5)
    assert groups["depth"]["5"]["syntax"] == 0.0
    assert groups["difficulty"]["medium"]["n"] == 2
    assert groups["difficulty"]["hard"]["strict"] == 0.0
    assert groups["domain"]["movie"]["n"] == 2
    # strings: right in d3, wrong in d4, unparsed in d5; booleans right in d3 and d4
    assert groups["element_type"]["string"] == {
        "n": 3,
        "fields": 3,
        "key_matching": pytest.approx(1 / 3),
    }
    assert groups["element_type"]["boolean"]["key_matching"] == pytest.approx(2 / 3)
    assert arm.metrics["key_matching"] == pytest.approx(0.5)
    assert arm.noncompliant == {"total": 1, "other": 1}  # d5 failed the syntax gate
    # What explains the scores is in each sample, under the family's name.
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    details = samples[1]["score_details"]["deepjson"]
    assert details["schema_errors"] == []
    assert details["element_scores"]["string"] == {"fields": 1, "key_matching": 0.0}
    assert samples[2]["score_details"]["deepjson"]["element_scores"]["string"]["fields"] == 1


def test_budget_is_per_depth_not_per_example(run_fake: RunFake) -> None:
    result, _ = deep_run(run_fake, [], dataset())
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    decoding = manifest["models"][0]["plan"]["decoding"]
    assert set(decoding["max_tokens_by_schema"]) == {"depth-3", "depth-4", "depth-5"}
    assert manifest["task"]["name"] == "deepjson"
    assert manifest["task"]["metric_family"] == "deepjson"
    assert "Keep the schema's hierarchy" in manifest["task"]["prompt_template"]


def test_examples_over_max_context_are_skipped_with_the_reason(run_fake: RunFake) -> None:
    exs = dataset(words={4: 600})  # d4's prompt is far longer than the others
    result, backend = deep_run(
        run_fake, [json.dumps(deep_value(3, "n3"))], exs, max_context=512, max_tokens=64
    )
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    skipped = [s for s in samples if s["finish_reason"] == "skipped"]
    assert [s["id"] for s in skipped] == ["d4"]
    assert skipped[0]["scores"] is None and skipped[0]["parse"] is None
    assert skipped[0]["raw_output"] == ""
    assert "does not fit --max-context (512)" in skipped[0]["error"]
    assert len(backend.prompts) == 2  # d4 was never sent to the model, not truncated
    arm = result.summary.arms[0]
    assert arm.n_skipped == 1 and arm.metrics["n"] == 2 and arm.n_errors == 0
    assert arm.metrics["n_skipped"] == 1
    # its only example skipped: no value (null in summary.json), not 0
    assert arm.families["deepjson"].groups["depth"]["4"] == {
        "n": 0,
        "n_skipped": 1,
        "syntax": None,
        "key_matching": None,
        "strict": None,
        "valid_json": None,
    }
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["models"][0]["plan"]["decoding"]["skipped_examples"] == 1
    assert manifest["arms"][0]["n_ctx"] <= 512
    console = Console(width=120, record=True)
    console.print(render_summary(result.summary))
    shown = console.export_text()
    assert "1 examples skipped" in shown and "Key match" in shown
    assert shown.index("medium") < shown.index("hard") < shown.index("overall")


def test_context_plan_rules() -> None:
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


def test_context_plan_is_sized_from_the_examples_the_run_decodes() -> None:
    """`run`: the examples decoded. An automatic n_ctx is sized from those (up to the
    limit), the skipped ones are keyed by position in the run; a fixed --n-ctx fits the
    run's only."""
    exs = echo_examples(3)
    tokens = [100, 900, 200]
    plan = plan_context(exs, tokens, [64] * 3, n_ctx=None, max_context=None, n_ctx_train=8192,
                        run=[0])  # fmt: skip
    assert plan.n_ctx == 256 and plan.skipped == {}  # 164 rounded up: the run's own
    plan = plan_context(exs, tokens, [64] * 3, n_ctx=None, max_context=None, n_ctx_train=8192,
                        run=[0, 1])  # fmt: skip
    assert plan.n_ctx == 1024  # 964 rounded up
    plan = plan_context(exs, tokens, [64] * 3, n_ctx=None, max_context=512, n_ctx_train=8192,
                        run=[2, 1])  # fmt: skip
    assert plan.n_ctx == 512 and list(plan.skipped) == [1]  # the run's second example
    plan = plan_context(exs, tokens, [64] * 3, n_ctx=512, max_context=None, n_ctx_train=8192,
                        run=[0, 2])  # fmt: skip
    assert plan.n_ctx == 512  # example 1 does not fit 512, but the run does not decode it


def test_the_closing_room_is_the_close_arms_own() -> None:
    """A `+close` arm may add --close-tokens after the budget: an example that fits only
    without that room is run by the other arms and skipped by the closing ones, each
    with its real numbers."""
    exs = echo_examples(3)
    plan = plan_context(exs, [100, 300, 500], [64] * 3, n_ctx=None, max_context=512,
                        n_ctx_train=8192, room=256)  # fmt: skip
    assert plan.skipped == {2: "prompt of 500 tokens + max tokens 64 = 564 does not fit "
                               "--max-context (512)"}  # fmt: skip
    assert plan.close_skipped == {
        1: "prompt of 300 tokens + max tokens 64 + closing room 256 (--close-tokens) = 620 "
        "does not fit --max-context (512)"
    }
    assert plan.n_ctx == 512  # 100 + 64 + 256 = 420 and 300 + 64 = 364, rounded up
    plan = plan_context(exs, [100, 300, 500], [64] * 3, n_ctx=None, max_context=512,
                        n_ctx_train=8192)  # fmt: skip
    assert plan.close_skipped == {} and list(plan.skipped) == [2]


def test_compare_shows_deepjson_scores(run_fake: RunFake) -> None:
    result, _ = deep_run(run_fake, [json.dumps(deep_value(3, "n3"))], dataset())
    row = compare_rows([load_run(result.run_dir).summary])[0]
    assert row["key_matching"] == pytest.approx(1 / 3)
    assert row["strict"] == pytest.approx(1 / 3)
    assert "json_exact" not in row and "schema_compliance" not in row


def test_skipped_examples_are_complete_for_resume_and_stay_unscored_by_score(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """A skipped example is a finished record: --resume keeps it (never decodes it) and
    `edgebench score` leaves it unscored, reproducing the summary."""
    task = DeepJSONTask()
    exs, record = load_examples(task, RunSettings(task="deepjson"))
    # Fake tokens are words: pick a limit between the shortest and the longest prompts.
    words = sorted(len(task.build_prompt(e).user.split()) for e in exs[:6])
    limit = (words[1] + words[-1]) // 2 + 64
    out = tmp_path / "run"
    answers = [json.dumps(e.expected) for e in exs[:6]]

    class StopsAtThe4th(FakeBackend):  # Ctrl-C on the 4th decode
        def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
            if len(self.prompts) == 3:
                raise KeyboardInterrupt
            return super().generate(prompt, settings)

    def go(backend: FakeBackend, resume: bool) -> Any:
        return run_fake(
            backend,
            task_impl=task,
            examples=exs,
            dataset_record=record,
            out=out,
            task="deepjson",
            limit=6,
            max_context=limit,
            max_tokens=64,
            resume=resume,
        )

    with pytest.raises(RunInterrupted):  # stopped after 5 records, skips among them
        go(StopsAtThe4th(answers), resume=False)
    first = read_jsonl(out / "samples.jsonl")
    kept_skips = [s["id"] for s in first if s["finish_reason"] == "skipped"]
    assert len(first) == 5 and kept_skips
    backend = FakeBackend(answers[5:])
    result = go(backend, resume=True)
    samples = read_jsonl(out / "samples.jsonl")
    skipped = [s["id"] for s in samples if s["finish_reason"] == "skipped"]
    assert skipped == kept_skips and [s["index"] for s in samples] == list(range(6))
    assert len(backend.prompts) == 1  # only the one example never recorded was decoded
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["resumes"][0]["samples_kept"] == 5
    arm = result.summary.arms[0]
    assert arm.n_skipped == len(skipped) and arm.metrics["n"] == 6 - len(skipped)
    assert arm.metrics["strict"] == 1.0  # every decoded answer was the expected one

    shown = facts.metric_names(rundata.arms(rundata.load_run(out)))  # cards and reports
    assert shown == SCORES
    before = (out / "summary.json").read_bytes()
    rescore(out)
    assert (out / "summary.json").read_bytes() == before
    again = read_jsonl(out / "samples.jsonl")
    assert [s["scores"] for s in again if s["finish_reason"] == "skipped"] == [None] * len(skipped)


def test_deepjson_as_an_extra_family_scores_another_task(run_fake: RunFake) -> None:
    """`--metrics deepjson` on an EdgeJSON-scored task: each sample also carries the
    family's own scores of its output (the one scoring path), and the summary lists the
    family as an extra with its element-type breakdown."""
    outputs = ['{"a": 1}', '{"a": "1"}', "{"]
    result = run_fake(outputs, metrics=("deepjson",))
    family = get_family("deepjson")
    assert list(family.score_names) == SCORES
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    for sample, raw in zip(samples, outputs, strict=True):
        expected = family.evaluate(parse_json_output(raw), {"a": 1}, {"type": "object"})
        assert sample["scores"]["deepjson"] == expected.scores
        assert (
            sample["score_details"]["deepjson"]["element_scores"]
            == (expected.details["element_scores"])
        )
    assert [s["scores"]["deepjson"]["strict"] for s in samples] == [1, 0, 0]
    arm = result.summary.arms[0]
    assert list(arm.families) == ["edgejson", "deepjson"]
    extra = arm.families["deepjson"]
    assert extra.role == "extra" and extra.overall["strict"] == pytest.approx(1 / 3)
    assert "element_type" in extra.groups
    assert arm.metrics == arm.families["edgejson"].overall  # the task's figures stay EdgeJSON's


def test_coverage_counts_deepjsons_own_schema_score(run_fake: RunFake) -> None:
    """A schema engine's coverage on DeepJSONEval reads the family's schema score (syntax),
    not a `schema_compliance` the family does not have."""
    outputs = [json.dumps(deep_value(3, "n3")), "{}", "{}"]
    result, _ = deep_run(run_fake, outputs, dataset(), constraints=("gbnf",))
    rows = coverage_rows([load_run(result.run_dir).summary])
    overall = rows[-1]
    assert overall["group"] == "overall" and overall["schema_score"] == "syntax"
    assert overall["schema_compliance"] == pytest.approx(1 / 3)
    assert overall["compliant_when_compiled"] == pytest.approx(1 / 3)


def test_no_example_fits_names_the_row_that_set_the_budget(run_fake: RunFake) -> None:
    """One very long expected answer raises the automatic budget of its whole schema past
    the context: the error names that row and --max-tokens."""
    exs = [echo_example(0), echo_example(1, expected={"k": ["v"] * 400}), echo_example(2)]
    with pytest.raises(UserError) as error:
        run_fake([], examples=exs, max_context=512)
    message = str(error.value)
    assert message.startswith("no example fits --max-context (512)")
    assert "of 's' is set by example 'ex1'" in message
    assert "give --max-tokens N" in message
    assert "\n" not in message


def test_no_example_fits_under_max_tokens_says_so() -> None:
    exs = echo_examples(2)
    budget = plan_budget(900, exs, [1, 1])
    with pytest.raises(UserError, match="max tokens 900 is --max-tokens: give a smaller one"):
        plan_context(exs, [10, 10], [900, 900], n_ctx=None, max_context=512,
                     n_ctx_train=8192, token_budget=budget)  # fmt: skip
