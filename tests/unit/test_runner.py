"""The runner with a fake backend: run folder contents, timings, errors, partial results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.worker import BackendWorker, InProcessWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.prompts import STYLE_COMPLETION, PromptFormat
from edgebench.runner.budget import plan_budget, size_context
from edgebench.runner.run import (
    ModelUnderTest,
    RunSettings,
    execute,
)
from edgebench.tasks.base import Example, Prompt


class EchoTask:
    """A minimal task: the prompt is the example text; exact match on the raw output."""

    name = "echo"
    prompt_template = "{text}"

    def resolve_paths(self, dataset: Path | None, schemas: Path | None) -> tuple[Path, None]:
        raise NotImplementedError  # not used by execute()

    def load(self, dataset: Path, schemas: Path | None) -> list[Example]:
        raise NotImplementedError  # not used by execute()

    def build_prompt(self, example: Example) -> Prompt:
        return Prompt(system=None, user=example.text)

    def score(self, raw_output: str, example: Example) -> dict[str, Any]:
        exact = int(raw_output == example.expected)
        return {"parsed": raw_output, "scores": {"json_exact": exact, "valid_json": 1}}


def examples(n: int) -> list[Example]:
    return [
        Example(
            id=f"ex{i}",
            text=" ".join(["word"] * (i + 2)),
            schema_id="s",
            schema={},
            expected="a b c",
            groups={"complexity": "simple" if i % 2 else "complex", "schema": "s"},
        )
        for i in range(n)
    ]


def model() -> ModelUnderTest:
    return ModelUnderTest(
        label="fake-model",
        path=Path("/nonexistent/fake.gguf"),
        sha256="0" * 64,
        size_bytes=1,
        prompt_format=PromptFormat(style=STYLE_COMPLETION),
        n_ctx_train=4096,
        backend="fake",
    )


def run_fake(tmp_path: Path, backend: FakeBackend, n: int = 3, **settings: Any):
    cfg = RunSettings(out=tmp_path / "run", warmup=False, **settings)
    return execute(
        cfg,
        model(),
        EchoTask(),
        examples(n),
        {"path": "mem"},
        worker_factory=lambda mode: InProcessWorker(backend),
    )


def test_run_folder_has_manifest_samples_and_summary(tmp_path: Path) -> None:
    backend = FakeBackend(["a b c", "x y", "a b c"])
    result = run_fake(tmp_path, backend)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    summary = json.loads((result.run_dir / "summary.json").read_text())

    assert manifest["status"] == "completed"
    assert manifest["task"]["prompt_template"] == "{text}"
    assert manifest["model"]["prompt_format"]["style"] == "completion"
    # the device block: read before the model loads; the runtime build from the first load
    assert manifest["device"]["logical_cores"] and manifest["device"]["threads_used"] == 2
    assert manifest["device"]["runtime"] == {"name": "fake"}
    assert [s["id"] for s in samples] == ["ex0", "ex1", "ex2"]
    assert [s["scores"]["json_exact"] for s in samples] == [1, 0, 1]
    assert summary["metrics"]["json_exact"] == pytest.approx(2 / 3)
    assert summary["by_complexity"]["complex"]["n"] == 2
    assert summary["by_complexity"]["simple"]["json_exact"] == 0.0
    assert set(summary["perf"]) >= {
        "load_s",
        "peak_rss_mb",
        "ttft_s",
        "latency_s",
        "prefill_tok_s",
        "decode_tok_s",
        "prompt_tokens_total",
        "output_tokens_total",
    }


def test_timings_come_from_the_backend_clock(tmp_path: Path) -> None:
    # 3 output tokens + end token = 4 sampled; 3 decode steps of 10 ms -> 100 tok/s.
    backend = FakeBackend(["a b c"], timings=FakeTimings(0.001, 0.01))
    result = run_fake(tmp_path, backend, n=1)
    sample = read_jsonl(result.run_dir / "samples.jsonl")[0]
    prompt_tokens = len(sample["prompt"].split())
    assert sample["prompt_tokens"] == prompt_tokens
    assert sample["output_tokens"] == 3 and sample["generated_tokens"] == 4
    assert sample["timings"]["ttft_s"] == pytest.approx(prompt_tokens * 0.001)
    assert sample["timings"]["prefill_tok_s"] == pytest.approx(1000.0)
    assert sample["timings"]["decode_tok_s"] == pytest.approx(100.0)
    assert sample["timings"]["latency_s"] == pytest.approx(prompt_tokens * 0.001 + 0.03)
    perf = result.summary["perf"]
    assert perf["decode_tok_s"]["p50"] == pytest.approx(100.0)
    assert perf["output_tokens_total"] == 3


def test_token_limit_is_recorded(tmp_path: Path) -> None:
    backend = FakeBackend(["a b c d e f"])
    result = run_fake(tmp_path, backend, n=1, max_tokens=4)
    sample = read_jsonl(result.run_dir / "samples.jsonl")[0]
    assert sample["finish_reason"] == "length" and sample["hit_token_limit"] is True
    assert sample["raw_output"] == "a b c d"
    assert result.summary["perf"]["hit_token_limit"] == 1


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
    assert fixed.for_example(exs[0]) == 99 and fixed.describe()["max_tokens_rule"] == "--max-tokens"


def test_limit_takes_the_first_examples_and_budget_uses_the_whole_dataset(
    tmp_path: Path,
) -> None:
    result = run_fake(tmp_path, FakeBackend(), n=5, limit=2)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert result.summary["n_examples"] == 2
    assert manifest["decoding"]["max_tokens"] == 64
    assert manifest["decoding"]["max_tokens_by_schema"] == {"s": 64}
    assert manifest["decoding"]["max_tokens_rule"].startswith("auto")


def test_non_empty_output_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "old.txt").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        run_fake(tmp_path, FakeBackend())


def test_worker_process_generates_and_reports_memory() -> None:
    from edgebench.backends.base import DecodeSettings

    worker = BackendWorker("fake", {"outputs": ["{ }"]})
    try:
        assert worker.count_tokens(["a b", "c"]) == [2, 1]
        info, load_s = worker.load(256)
        assert info.n_ctx == 256 and load_s >= 0
        gen = worker.generate("x y", DecodeSettings(max_tokens=8))
        assert gen.text == "{ }"
    finally:
        peak = worker.close()
    assert peak.peak_rss_mb > 5 and peak.samples >= 1


def test_crashed_worker_keeps_completed_samples(tmp_path: Path) -> None:
    exs = examples(3)
    exs[2] = Example("boom", "CRASH here", "s", {}, "a b c", {"complexity": "simple"})
    cfg = RunSettings(out=tmp_path / "run", warmup=False)
    result = execute(
        cfg,
        model(),
        EchoTask(),
        exs,
        {"path": "mem"},
        worker_factory=lambda mode: BackendWorker(
            "fake", {"outputs": ["a b c"], "crash_marker": "CRASH"}
        ),
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "completed" and result.worker_failures == 1
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert [(s["id"], s["finish_reason"]) for s in samples] == [
        ("ex0", "stop"),
        ("ex1", "stop"),
        ("boom", "crashed"),
    ]
    assert "SIGSEGV" in samples[2]["error"] and "'boom'" in samples[2]["error"]
    assert manifest["arms"]["none"]["restarts"] == 0  # nothing left to run after it
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_examples"] == 3 and summary["n_crashed"] == 1


def test_backend_that_fails_to_start_reports_its_error() -> None:
    from edgebench.isolation import WorkerError

    worker = BackendWorker("fake", {"no_such_option": 1})  # the constructor raises
    try:
        with pytest.raises(WorkerError, match="no_such_option") as info:
            worker.count_tokens(["a"])
        assert info.value.remote_type == "TypeError"
    finally:
        worker.close()


def test_worker_killed_between_requests_is_reported() -> None:
    import os
    import signal

    from edgebench.isolation import WorkerDied

    worker = BackendWorker("fake", {})
    try:
        assert worker.count_tokens(["a"]) == [1]
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.process.join(5)
        with pytest.raises(WorkerDied, match=r"SIGKILL.*out of memory"):
            worker.count_tokens(["a"])
    finally:
        worker.close()


def test_ctrl_c_keeps_completed_samples_and_marks_the_run_interrupted(tmp_path: Path) -> None:
    class InterruptedBackend(FakeBackend):
        def generate(self, prompt, settings):  # type: ignore[no-untyped-def]
            if len(self.prompts) == 2:
                raise KeyboardInterrupt
            return super().generate(prompt, settings)

    with pytest.raises(KeyboardInterrupt):
        run_fake(tmp_path, InterruptedBackend(["a b c"] * 3), n=3)
    run_dir = tmp_path / "run"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert [s["id"] for s in read_jsonl(run_dir / "samples.jsonl")] == ["ex0", "ex1"]
    assert json.loads((run_dir / "summary.json").read_text())["n_examples"] == 2


def test_worker_dies_with_its_parent(tmp_path: Path) -> None:
    """A parent killed outright (SIGKILL, OOM) must not leave a worker decoding on."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "worker.pid"
    script = (
        "import time, sys\n"
        "from edgebench.backends.worker import BackendWorker\n"
        "w = BackendWorker('fake', {})\n"
        "w.count_tokens(['a'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(w.process.pid))\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.1)
    worker_pid = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"worker {worker_pid} outlived its parent")
