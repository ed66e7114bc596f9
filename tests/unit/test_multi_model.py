"""Several models in one run (`--model a,b`): each model and mode in its own worker, one
run folder, summary and `compare` side by side, unsupported modes recorded as skips."""

from __future__ import annotations

import dataclasses
import json
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
from edgebench.runner.run import ModelUnderTest, RunInterrupted, RunSettings, execute
from tests.unit.test_constraints import examples
from tests.unit.test_runner import EchoTask, model


def two_models() -> list[ModelUnderTest]:
    gguf = dataclasses.replace(model(), label="tiny", size_bytes=100_000_000)
    onnx = dataclasses.replace(model(), label="tiny@onnx-int4", size_bytes=180_000_000)
    return [gguf, onnx]


def run_two(tmp_path: Path, modes: tuple[str, ...] = ("none",), **backend_of: Any) -> Any:
    """Model `tiny` decodes 10 ms per token, `tiny@onnx-int4` 20 ms; `backend_of` can
    give a model another backend name (e.g. onnx, to see its skips)."""
    made: list[tuple[str, str]] = []
    speeds = {"tiny": 0.01, "tiny@onnx-int4": 0.02}

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        made.append((m.label, mode))
        timings = FakeTimings(per_output_token=speeds[m.label])
        outputs = ["a b c", "a b", "x y"] if m.label == "tiny" else ["a b c", "q", "q"]
        return InProcessWorker(FakeBackend(outputs, timings=timings))

    models = [
        dataclasses.replace(m, backend=backend_of.get(m.label.replace("@", "_"), m.backend))
        for m in two_models()
    ]
    cfg = RunSettings(out=tmp_path / "run", warmup=False, constraints=modes)
    result = execute(
        cfg, models, EchoTask(), examples(), {"path": "mem"}, model_worker_factory=factory
    )
    return result, made


def test_each_model_runs_in_its_own_workers_into_one_folder(tmp_path: Path) -> None:
    result, made = run_two(tmp_path, ("none", "mask"))
    # One counting worker per model; the first model's decodes its first arm.
    assert made == [
        ("tiny", "none"),
        ("tiny@onnx-int4", "none"),
        ("tiny", "mask"),
        ("tiny@onnx-int4", "none"),
        ("tiny@onnx-int4", "mask"),
    ]
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert [(s["model"], s["constraint"]) for s in samples[::3]] == [
        ("tiny", "none"),
        ("tiny", "mask"),
        ("tiny@onnx-int4", "none"),
        ("tiny@onnx-int4", "mask"),
    ]
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert [m["label"] for m in manifest["models"]] == ["tiny", "tiny@onnx-int4"]
    assert list(manifest["arms"]) == [
        "tiny | none",
        "tiny | mask",
        "tiny@onnx-int4 | none",
        "tiny@onnx-int4 | mask",
    ]
    assert all(arm["memory"]["peak_rss_mb"] > 0 for arm in manifest["arms"].values())
    assert manifest["models"][1]["decoding"]["max_tokens_rule"]


def test_summary_puts_models_side_by_side(tmp_path: Path) -> None:
    result, _ = run_two(tmp_path)
    summary = result.summary
    assert summary["models"] == ["tiny", "tiny@onnx-int4"]
    assert summary["model"] == "tiny"  # the top level stays the first model's
    onnx = summary["by_model"]["tiny@onnx-int4"]
    assert onnx["size_bytes"] == 180_000_000
    none = onnx["by_constraint"]["none"]
    assert none["metrics"]["json_exact"] == pytest.approx(1 / 3)
    assert none["model_size_mb"] == pytest.approx(180.0)
    # 20 ms per token against 10 ms: half the decode speed of the first model.
    assert none["decode_ratio_to_first_model"] == pytest.approx(0.5)
    assert summary["by_model"]["tiny"]["by_constraint"]["none"]["decode_ratio_to_first_model"] == 1


def test_compare_rows_and_table_have_both_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _ = run_two(tmp_path)
    rows = compare_rows([result.summary])
    assert [(r["model"], r["constraint"]) for r in rows] == [
        ("tiny", "none"),
        ("tiny@onnx-int4", "none"),
    ]
    assert rows[1]["model_size_mb"] == pytest.approx(180.0)
    assert rows[1]["perf.load_s"] is not None
    with pytest.raises(SystemExit):
        main(["compare", str(result.run_dir)])
    out = capsys.readouterr().out
    assert "models and constraint modes side by side" in out
    assert "tiny@onnx-int4" in out and "size MB" in out and "×1st" in out


def test_modes_a_runtime_cannot_apply_are_recorded_skips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, made = run_two(tmp_path, ("none", "gbnf", "outlines"), **{"tiny_onnx-int4": "onnx"})
    assert ("tiny@onnx-int4", "gbnf") not in made and ("tiny@onnx-int4", "outlines") not in made
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    arm = manifest["arms"]["tiny@onnx-int4 | gbnf"]
    assert arm["status"] == "skipped" and "llama.cpp's sampler" in arm["reason"]
    assert manifest["status"] == "completed"
    rows = {(r["model"], r["constraint"]): r for r in compare_rows([result.summary])}
    assert rows[("tiny@onnx-int4", "outlines")]["skipped"].startswith(
        "constraint 'outlines' is not available for onnx models"
    )
    assert rows[("tiny@onnx-int4", "gbnf")]["n"] == 0
    assert rows[("tiny", "gbnf")]["n"] == 3
    with pytest.raises(SystemExit):
        main(["compare", str(result.run_dir)])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "tiny@onnx-int4" in line and "gbnf" in line)
    assert "skip" in row
    assert "skipped: tiny@onnx-int4 · gbnf" in " ".join(out.split())


def test_a_model_named_twice_is_refused(tmp_path: Path) -> None:
    cfg = RunSettings(out=tmp_path / "run", warmup=False)
    with pytest.raises(UserError, match="'fake-model' is named twice"):
        execute(cfg, [model(), model()], EchoTask(), examples(), {"path": "mem"})


def test_model_lists_are_parsed_in_order() -> None:
    assert parse_model_list(None) == [None]
    assert parse_model_list("a, b@onnx-int4") == ["a", "b@onnx-int4"]
    with pytest.raises(UserError, match="--model: empty name in 'a,,b'"):
        parse_model_list("a,,b")


def test_a_model_that_does_not_fit_fails_before_any_model_runs(tmp_path: Path) -> None:
    short = dataclasses.replace(two_models()[1], n_ctx_train=2)
    made: list[str] = []

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        made.append(m.label)
        return InProcessWorker(FakeBackend())

    cfg = RunSettings(out=tmp_path / "run", warmup=False, max_tokens=4)
    with pytest.raises(UserError, match=r"fits? the model.s context length"):
        execute(
            cfg,
            [two_models()[0], short],
            EchoTask(),
            examples(),
            {"path": "mem"},
            model_worker_factory=factory,
        )
    assert not (tmp_path / "run" / "samples.jsonl").exists()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed"


class InterruptAfter:
    """A progress hook that presses Ctrl-C after `n` samples."""

    def __init__(self, n: int) -> None:
        self.n, self.seen = n, 0

    def start(self, total: int, description: str) -> None: ...
    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...

    def advance(self, sample: dict[str, Any]) -> None:
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt


def echo_run(out: Path, models: list[ModelUnderTest], *, resume: bool = False, **kw: Any) -> Any:
    """Two modes of every model, the fake backend answering each prompt's first line."""

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        return InProcessWorker(FakeBackend(echo=True))

    cfg = RunSettings(out=out, warmup=False, constraints=("none", "json"))
    data = {"path": "mem", "sha256": "d" * 64}
    return execute(
        cfg, models, EchoTask(), examples(), data, model_worker_factory=factory, resume=resume, **kw
    )


def arm_contents(out: Path) -> list[tuple[Any, ...]]:
    return [
        (s["model"], s["constraint"], s["id"], s["raw_output"], s["finish_reason"])
        for s in read_jsonl(out / "samples.jsonl")
    ]


def test_an_interrupted_multi_model_run_resumes_to_the_same_samples(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    echo_run(reference, two_models())
    out = tmp_path / "run"
    # Stopped in the second model's first arm: the first model's two arms are complete.
    with pytest.raises(RunInterrupted):
        echo_run(out, two_models(), progress=InterruptAfter(2 * 3 + 2))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["arms"]["tiny@onnx-int4 | none"]["status"] == "interrupted"
    assert "tiny@onnx-int4 | json" not in manifest["arms"]

    result = echo_run(out, two_models(), resume=True)
    assert arm_contents(out) == arm_contents(reference)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert (
        manifest["resumes"][0]["samples_kept"] == 8
        and manifest["resumes"][0]["duplicates_dropped"] == 0
    )
    assert list(manifest["arms"]) == [
        "tiny | none",
        "tiny | json",
        "tiny@onnx-int4 | none",
        "tiny@onnx-int4 | json",
    ]
    assert all(arm["status"] == "completed" for arm in manifest["arms"].values())
    by_model = result.summary["by_model"]
    assert [m["by_constraint"]["json"]["n_examples"] for m in by_model.values()] == [3, 3]


def test_a_completed_multi_model_run_resumes_without_running_anything(tmp_path: Path) -> None:
    out = tmp_path / "run"
    echo_run(out, two_models())
    before = arm_contents(out)
    made: list[str] = []

    def factory(m: ModelUnderTest, mode: str) -> InProcessWorker:
        made.append(f"{m.label} | {mode}")
        return InProcessWorker(FakeBackend(echo=True))

    cfg = RunSettings(out=out, warmup=False, constraints=("none", "json"))
    data = {"path": "mem", "sha256": "d" * 64}
    execute(
        cfg, two_models(), EchoTask(), examples(), data, model_worker_factory=factory, resume=True
    )
    assert arm_contents(out) == before
    # Only the workers that count tokens for the plan, one per model; nothing decodes.
    assert made == ["tiny | none", "tiny@onnx-int4 | none"]


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
def test_resume_refuses_other_models(tmp_path: Path, change: Any, message: str) -> None:
    out = tmp_path / "run"
    echo_run(out, two_models())
    with pytest.raises(UserError, match=r"cannot resume .*: " + message):
        echo_run(out, change(two_models()), resume=True)


def test_a_single_model_run_refuses_to_resume_as_a_multi_model_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    echo_run(out, two_models()[:1])
    with pytest.raises(UserError, match=r"models differs \(run: tiny, now: tiny,tiny@onnx-int4\)"):
        echo_run(out, two_models(), resume=True)


def test_commands_of_one_model_refuse_a_model_list() -> None:
    from edgebench.runner.prepare import model_under_test

    with pytest.raises(UserError, match=r"one model here \(a comma-separated list is for"):
        model_under_test("a,b@onnx-int4")
