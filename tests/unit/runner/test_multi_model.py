"""Several models in one run (`--model a,b`): each model and mode in its own worker, one
run folder, the summary and `compare` side by side, unsupported modes recorded as skips,
and resume of a run of several models."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.app import main
from edgebench.cli.run_cmd import parse_model_list
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.prompts import PromptFormat
from edgebench.report.compare import compare_rows
from edgebench.runner.engine import RunInterrupted
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.faults import echo_examples, interrupt_after
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of, sample_content

SPEEDS = {"tiny": 0.01, "tiny@onnx-int4": 0.02}  # seconds per decoded token
OUTPUTS = {"tiny": [RIGHT, RIGHT, WRONG], "tiny@onnx-int4": [RIGHT, WRONG, WRONG]}


def two_models(onnx_backend: str = "fake") -> list[ModelUnderTest]:
    """`tiny` and `tiny@onnx-int4`; the second on `onnx_backend` (onnx: to see its skips)."""
    return [
        fake_model("tiny", size_bytes=100_000_000),
        fake_model("tiny@onnx-int4", size_bytes=180_000_000, backend=onnx_backend),
    ]


def arms_in_order(*modes: str) -> list[tuple[str, str]]:
    """(model, mode) of every arm of `two_models` in run order: model by model, each
    model's modes in the order given."""
    return [(model, mode) for model in ("tiny", "tiny@onnx-int4") for mode in modes]


def arm_keys(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(model, mode) of each arm or sample record."""
    return [(r["model"], r["constraint"]) for r in records]


def assert_every_arm_completed(manifest: dict[str, Any], *modes: str) -> None:
    """The manifest lists every arm of the two models in run order, each completed."""
    assert arm_keys(manifest["arms"]) == arms_in_order(*modes)
    assert all(arm["status"] == "completed" for arm in manifest["arms"])


def run_two(run_fake: RunFake, modes: tuple[str, ...] = ("none",), **kw: Any) -> Any:
    """Model `tiny` decodes 10 ms per token, `tiny@onnx-int4` 20 ms; returns the result
    and the (model, mode) of every worker started, in order."""
    made: list[tuple[str, str]] = []

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        made.append((m.label, mode))
        timings = FakeTimings(per_output_token=SPEEDS[m.label])
        return InProcessWorker(FakeBackend(list(OUTPUTS[m.label]), timings=timings))

    kw.setdefault("models", two_models())
    return run_fake(constraints=modes, factory=factory, **kw), made


def test_each_model_runs_in_its_own_workers_into_one_folder(run_fake: RunFake) -> None:
    result, made = run_two(run_fake, ("none", "mask"))
    # One counting worker per model; the first model's decodes its first arm.
    assert made == [
        ("tiny", "none"),
        ("tiny@onnx-int4", "none"),
        ("tiny", "mask"),
        ("tiny@onnx-int4", "none"),
        ("tiny@onnx-int4", "mask"),
    ]
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert arm_keys(samples[::3]) == arms_in_order("none", "mask")
    manifest = manifest_of(result.run_dir)
    assert [m["label"] for m in manifest["models"]] == ["tiny", "tiny@onnx-int4"]
    assert_every_arm_completed(manifest, "none", "mask")
    assert all(arm["memory"]["peak_rss_mb"] > 0 for arm in manifest["arms"])
    # Each model has its own plan.
    plans = [m["plan"] for m in manifest["models"]]
    assert all(p["decoding"]["max_tokens_rule"].startswith("auto") for p in plans)
    assert all(p["memory_check"]["fits"] for p in plans)


def test_summary_puts_models_side_by_side(run_fake: RunFake) -> None:
    result, _ = run_two(run_fake)
    summary = result.summary
    assert summary.models == ["tiny", "tiny@onnx-int4"]
    tiny, onnx = summary.arm("tiny", "none"), summary.arm("tiny@onnx-int4", "none")
    assert tiny is not None and onnx is not None
    assert tiny.metrics["json_exact"] == pytest.approx(2 / 3)
    assert onnx.metrics["json_exact"] == pytest.approx(1 / 3)
    assert onnx.model_size_mb == pytest.approx(180.0)
    # 20 ms per token against 10 ms: half the decode speed of the first model.
    assert onnx.decode_ratio_to_first_model == pytest.approx(0.5)
    assert tiny.decode_ratio_to_first_model == 1
    assert tiny.decode_ratio_to_none == onnx.decode_ratio_to_none == 1


def test_compare_rows_and_table_have_both_models(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _ = run_two(run_fake)
    rows = compare_rows([result.summary])
    assert arm_keys(rows) == arms_in_order("none")
    assert rows[1]["model_size_mb"] == pytest.approx(180.0)
    assert rows[1]["json_exact"] == pytest.approx(1 / 3)
    assert rows[1]["load_s"] is not None
    assert rows[1]["decode_ratio_to_first_model"] == pytest.approx(0.5)
    with pytest.raises(SystemExit):
        main(["compare", str(result.run_dir)])
    out = capsys.readouterr().out
    assert "models and constraint modes side by side" in out
    assert "tiny@onnx-int4" in out and "size MB" in out and "×1st" in out


def test_modes_a_runtime_cannot_apply_are_recorded_skips(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str]
) -> None:
    result, made = run_two(
        run_fake, ("none", "gbnf", "outlines"), models=two_models(onnx_backend="onnx")
    )
    assert ("tiny@onnx-int4", "gbnf") not in made and ("tiny@onnx-int4", "outlines") not in made
    manifest = manifest_of(result.run_dir)
    arms = {(a["model"], a["constraint"]): a for a in manifest["arms"]}
    arm = arms[("tiny@onnx-int4", "gbnf")]
    assert arm["status"] == "skipped" and "llama.cpp's sampler" in arm["skip_reason"]
    assert manifest["status"] == "completed"
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert {(s["model"], s["constraint"]) for s in samples} == {
        ("tiny", "none"),
        ("tiny", "gbnf"),
        ("tiny", "outlines"),
        ("tiny@onnx-int4", "none"),
    }
    rows = {(r["model"], r["constraint"]): r for r in compare_rows([result.summary])}
    assert rows[("tiny@onnx-int4", "outlines")]["skipped"].startswith(
        "constraint 'outlines' is not available for onnx models"
    )
    assert rows[("tiny@onnx-int4", "gbnf")]["n"] == 0
    assert rows[("tiny@onnx-int4", "gbnf")]["json_exact"] is None
    assert rows[("tiny", "gbnf")]["n"] == 3
    with pytest.raises(SystemExit):
        main(["compare", str(result.run_dir)])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "tiny@onnx-int4" in line and "gbnf" in line)
    assert "skip" in row
    assert "skipped arm: tiny@onnx-int4 · gbnf" in " ".join(out.split())


def test_model_lists_are_parsed_in_order() -> None:
    assert parse_model_list(None) == [None]
    assert parse_model_list("a, b@onnx-int4") == ["a", "b@onnx-int4"]
    with pytest.raises(UserError, match="--model: empty name in 'a,,b'"):
        parse_model_list("a,,b")


def test_a_model_that_does_not_fit_fails_before_any_model_runs(
    run_fake: RunFake, tmp_path: Path
) -> None:
    short = dataclasses.replace(two_models()[1], n_ctx_train=2)
    made: list[str] = []

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        made.append(m.label)
        return InProcessWorker(FakeBackend())

    with pytest.raises(UserError, match=r"fits? the model.s context length"):
        run_fake(models=[two_models()[0], short], factory=factory, max_tokens=4)
    assert made == ["tiny", "tiny@onnx-int4"]  # the plan's token counts; no arm started
    assert not (tmp_path / "run" / "samples.jsonl").exists()
    manifest = manifest_of(tmp_path / "run")
    assert manifest["status"] == "failed" and manifest["arms"] == []
    assert "context length" in manifest["error"]
    assert manifest["models"][0]["plan"] is not None  # the first model was planned


def echo_run(run_fake: RunFake, models: list[ModelUnderTest], **kw: Any) -> Any:
    """Two modes of every model, the fake answering each prompt (a JSON object) verbatim."""
    return run_fake(
        examples=echo_examples(3),
        models=models,
        constraints=("none", "json"),
        factory=lambda m, mode: InProcessWorker(FakeBackend(echo=True)),
        **kw,
    )


def test_an_interrupted_multi_model_run_resumes_to_the_same_samples(
    run_fake: RunFake, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    echo_run(run_fake, two_models(), out=reference)
    out = tmp_path / "run"
    # Stopped in the second model's first arm: the first model's two arms are complete.
    with pytest.raises(RunInterrupted):
        echo_run(run_fake, two_models(), out=out, progress=interrupt_after(2 * 3 + 2))
    manifest = manifest_of(out)
    arms = {(a["model"], a["constraint"]): a["status"] for a in manifest["arms"]}
    assert arms == {
        ("tiny", "none"): "completed",
        ("tiny", "json"): "completed",
        ("tiny@onnx-int4", "none"): "interrupted",
    }

    result = echo_run(run_fake, two_models(), out=out, resume=True)
    assert sample_content(out) == sample_content(reference)
    manifest = manifest_of(out)
    assert manifest["status"] == "completed"
    assert manifest["resumes"][0]["samples_kept"] == 8
    assert manifest["resumes"][0]["duplicates_dropped"] == 0
    assert_every_arm_completed(manifest, "none", "json")
    assert [a.n_examples for a in result.summary.arms] == [3, 3, 3, 3]


def test_a_completed_multi_model_run_resumes_without_running_anything(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, two_models(), out=out)
    before = sample_content(out)
    made: list[str] = []
    backends: list[FakeBackend] = []

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        made.append(f"{m.label} | {mode}")
        backends.append(FakeBackend(echo=True))
        return InProcessWorker(backends[-1])

    run_fake(
        examples=echo_examples(3),
        models=two_models(),
        constraints=("none", "json"),
        factory=factory,
        out=out,
        resume=True,
    )
    assert sample_content(out) == before
    # Only the workers that count tokens for the plan, one per model; nothing decodes.
    assert made == ["tiny | none", "tiny@onnx-int4 | none"]
    assert all(b.prompts == [] for b in backends)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda ms: ms[::-1],
            r"models differs \(run: tiny,tiny@onnx-int4, now: tiny@onnx-int4,tiny\)",
        ),
        (lambda ms: ms[:1], r"models differs \(run: tiny,tiny@onnx-int4, now: tiny\)"),
        (
            lambda ms: [ms[0], dataclasses.replace(ms[1], sha256="1" * 64)],
            r"model tiny@onnx-int4 sha256 differs \(run: 000000000000…, now: 111111111111…\)",
        ),
        (
            lambda ms: [
                ms[0],
                dataclasses.replace(
                    ms[1], prompt_format=PromptFormat(style="chat", chat_template="x")
                ),
            ],
            r"tiny@onnx-int4's prompt format differs",
        ),
    ],
)
def test_resume_refuses_other_models(
    run_fake: RunFake, tmp_path: Path, change: Any, message: str
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, two_models(), out=out)
    # a chat template is rendered without its throwaway process here (tests/system has it)
    with (
        chat_templates_in_process(),
        pytest.raises(UserError, match=r"cannot resume .*: " + message),
    ):
        echo_run(run_fake, change(two_models()), out=out, resume=True)


def test_a_single_model_run_refuses_to_resume_as_a_multi_model_run(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, two_models()[:1], out=out)
    with pytest.raises(UserError, match=r"models differs \(run: tiny, now: tiny,tiny@onnx-int4\)"):
        echo_run(run_fake, two_models(), out=out, resume=True)


def test_commands_of_one_model_refuse_a_model_list() -> None:
    from edgebench.runner.prepare import model_under_test

    with pytest.raises(UserError, match=r"one model here \(a comma-separated list is for"):
        model_under_test("a,b@onnx-int4")
