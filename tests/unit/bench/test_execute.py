"""`execute_bench` with in-process fake workers: the plan and context, rows per thread
count, the order of repetitions, the JSON kept after a failure and what kind of error
ends the bench (a crash is a run failure, a refused model the user's error)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from edgebench.bench import execute as bench
from edgebench.bench.execute import BenchSettings, bench_context, execute_bench, plan_tests
from edgebench.errors import RunFailure, UserError
from edgebench.isolation import WorkerError
from edgebench.runfolder.records import SCHEMA_VERSION, BenchRecord
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.bench_fakes import SpeedWorkers, bench_model


def test_plan_and_context() -> None:
    settings = BenchSettings(prompt_tokens=(128, 512, 128), gen_tokens=(0,), depths=(0, 256))
    tests = plan_tests(settings)
    assert [t.name for t in tests] == ["pp128", "pp512", "pp128 @ d256", "pp512 @ d256"]
    assert bench_context(tests, None, 8192) == 768
    with pytest.raises(UserError, match="--n-ctx 512 is too small for pp512 @ d256"):
        bench_context(tests, 512, 8192)
    with pytest.raises(UserError, match="more than the model's training context"):
        bench_context(tests, None, 600)
    with pytest.raises(UserError, match="nothing to measure"):
        plan_tests(BenchSettings(prompt_tokens=(0,), gen_tokens=(0,)))


def test_bench_writes_json_per_thread_count(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(64,), gen_tokens=(16,), repetitions=3, out=out
    )
    result = execute_bench(settings, [bench_model()], worker_factory=SpeedWorkers(), root=tmp_path)
    report = json.loads(out.read_text())
    assert report == json.loads(json.dumps(result.report))
    assert report["status"] == "completed" and "error" not in report
    rows = {(r["threads"], r["test"]): r for r in report["results"]}
    assert set(rows) == {(1, "pp64"), (1, "tg16"), (2, "pp64"), (2, "tg16")}
    assert rows[(1, "pp64")]["tok_s_mean"] == pytest.approx(500.0)
    assert rows[(2, "pp64")]["tok_s_mean"] == pytest.approx(1000.0)
    assert rows[(2, "tg16")]["tok_s"] == pytest.approx([100.0] * 3)
    assert all(r["peak_rss_mb"] > 0 and r["repetitions"] == 3 for r in rows.values())
    assert [w["threads"] for w in report["workers"]] == [1, 2]
    assert all(w["status"] == "completed" and w["n_ctx"] == 64 for w in report["workers"])
    assert report["settings"]["tests"] == ["pp64", "tg16"]
    assert report["settings"]["threads"] == [1, 2]
    assert report["device"]["runtime"] == {"name": "fake"}
    (model,) = report["models"]
    assert model["label"] == "fake-model" and model["quantization"] == "Q4_1"
    assert "prompt_format" not in model and "plan" not in model
    assert all(r["model"] == "fake-model" and r["quantization"] == "Q4_1" for r in rows.values())
    assert all(r["size_bytes"] == 98_362_432 for r in rows.values())  # the file's: no runtime's
    assert all(r["backend"] == "fake" for r in rows.values())  # the runtime's name for itself
    # the file is a BenchRecord of this format, every row and worker typed
    record = BenchRecord.from_json(report)
    assert record.schema_version == SCHEMA_VERSION and record.format == 2
    assert [w.model for w in record.workers] == ["fake-model", "fake-model"]


def test_workers_start_through_the_shared_worker_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a factory, each thread count's worker comes from `start_worker`: the
    model unconstrained, that many threads, no keyword guard."""
    calls: list[tuple[ModelUnderTest, str, int, bool]] = []
    workers = SpeedWorkers()

    def start_worker(model: ModelUnderTest, mode: str, *, threads: int, guard: bool) -> Any:
        calls.append((model, mode, threads, guard))
        return workers(model, threads)

    monkeypatch.setattr(bench, "start_worker", start_worker)
    model = bench_model()
    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(8,), gen_tokens=(0,), out=tmp_path / "b"
    )
    execute_bench(settings, [model], root=tmp_path)
    assert calls == [(model, "none", 1, False), (model, "none", 2, False)]


def test_a_crashed_worker_is_a_run_failure_that_keeps_what_was_measured(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(
        threads=(1, 2, 4), prompt_tokens=(8,), gen_tokens=(0,), interleave=False, out=out
    )
    workers = SpeedWorkers(die_at=2)
    with pytest.raises(
        RunFailure, match=rf"SIGSEGV.*what was measured is kept in {re.escape(str(out))}$"
    ):
        execute_bench(settings, [bench_model()], worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert workers.made == [1, 2]  # one thread count after another, stopped at the crash
    assert report["status"] == "crashed" and "SIGSEGV" in report["error"]
    assert [w["status"] for w in report["workers"]] == ["completed", "crashed"]
    assert [(r["threads"], r["test"]) for r in report["results"]] == [(1, "pp8")]


def test_a_model_the_worker_refuses_is_the_users_error(tmp_path: Path) -> None:
    """A `UserError` raised inside the worker (a model file it refuses) stays the user's
    mistake (exit 2), not a run failure."""
    out = tmp_path / "bench.json"
    refused = WorkerError("UserError", "not a model this backend can load", "")
    workers = SpeedWorkers(die_at=1, failure=refused)
    settings = BenchSettings(threads=(1,), prompt_tokens=(8,), gen_tokens=(0,), out=out)
    with pytest.raises(
        UserError,
        match=rf"^not a model this backend can load; report kept in {re.escape(str(out))}$",
    ):
        execute_bench(settings, [bench_model()], worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert report["status"] == "failed"
    assert report["error"] == "not a model this backend can load"


def test_a_backend_error_is_a_run_failure(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    broken = WorkerError("RuntimeError", "llama_decode returned -1", "")
    workers = SpeedWorkers(die_at=1, failure=broken)
    settings = BenchSettings(threads=(1,), prompt_tokens=(8,), gen_tokens=(0,), out=out)
    with pytest.raises(RunFailure, match="llama_decode returned -1; what was measured is kept"):
        execute_bench(settings, [bench_model()], worker_factory=workers, root=tmp_path)
    assert json.loads(out.read_text())["status"] == "failed"


def test_ctrl_c_keeps_the_report_and_is_not_swallowed(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    workers = SpeedWorkers(die_at=2, failure=KeyboardInterrupt())
    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(8,), gen_tokens=(0,), interleave=False, out=out
    )
    with pytest.raises(KeyboardInterrupt):
        execute_bench(settings, [bench_model()], worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert report["status"] == "interrupted"
    assert [w["status"] for w in report["workers"]] == ["completed", "interrupted"]


def test_interleaved_thread_counts_alternate_repetitions(tmp_path: Path) -> None:
    log: list[tuple[int, int]] = []  # (threads, tokens) of every evaluation, in order

    def factory(model: ModelUnderTest, threads: int) -> Any:
        worker = SpeedWorkers()(model, threads)
        evaluate = worker.backend.probe_eval

        def logged(tokens: Any) -> None:
            log.append((threads, len(tokens)))
            evaluate(tokens)

        worker.backend.probe_eval = logged
        return worker

    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(4,), gen_tokens=(2,), repetitions=2, out=tmp_path / "b"
    )
    report = execute_bench(settings, [bench_model()], worker_factory=factory, root=tmp_path).report
    assert "and the thread counts" in report["settings"]["order"]
    # warm-up of threads 1 (pp4, tg2), of threads 2, then each repetition: 1 then 2
    assert log == [(1, 4), (1, 1), (1, 1), (2, 4), (2, 1), (2, 1)] * 3
    assert [(r["threads"], r["test"], r["repetitions"]) for r in report["results"]] == [
        (1, "pp4", 2),
        (1, "tg2", 2),
        (2, "pp4", 2),
        (2, "tg2", 2),
    ]


def test_a_crash_while_interleaved_stops_every_worker(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(threads=(1, 2, 4), prompt_tokens=(8,), gen_tokens=(0,), out=out)
    workers = SpeedWorkers(die_at=2)
    with pytest.raises(RunFailure, match="SIGSEGV"):
        execute_bench(settings, [bench_model()], worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert workers.made == [1, 2, 4]  # all loaded first
    assert [w["status"] for w in report["workers"]] == ["stopped", "crashed", "stopped"]
    assert report["results"] == []  # the crash came during the warm-up: nothing timed
    assert all(w["memory"] is not None for w in report["workers"])


def test_an_existing_output_file_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    out.write_text("{}")
    with pytest.raises(UserError, match="already exists"):
        execute_bench(
            BenchSettings(out=out), [bench_model()], worker_factory=SpeedWorkers(), root=tmp_path
        )
    assert out.read_text() == "{}"


def test_several_models_one_after_another_each_in_its_own_workers(tmp_path: Path) -> None:
    workers = SpeedWorkers()
    models = [
        bench_model(label="a", quantization="Q4_1"),
        bench_model(label="b", quantization="Q8_0"),
    ]
    out = tmp_path / "bench.json"
    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(8,), gen_tokens=(2,), repetitions=2, out=out
    )
    report = execute_bench(settings, models, worker_factory=workers, root=tmp_path).report
    assert workers.made_for == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert [
        (r["model"], r["quantization"], r["threads"], r["test"]) for r in report["results"]
    ] == [
        ("a", "Q4_1", 1, "pp8"),
        ("a", "Q4_1", 1, "tg2"),
        ("a", "Q4_1", 2, "pp8"),
        ("a", "Q4_1", 2, "tg2"),
        ("b", "Q8_0", 1, "pp8"),
        ("b", "Q8_0", 1, "tg2"),
        ("b", "Q8_0", 2, "pp8"),
        ("b", "Q8_0", 2, "tg2"),
    ]
    # each row's peak RSS is its own worker's
    by_worker = {(w["model"], w["threads"]): w["memory"]["peak_rss_mb"] for w in report["workers"]}
    assert all(r["peak_rss_mb"] == by_worker[(r["model"], r["threads"])] for r in report["results"])
    assert [m["label"] for m in report["models"]] == ["a", "b"]


def test_a_crash_in_the_second_model_keeps_the_first_models_rows(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    workers = SpeedWorkers(die_at=1, die_model="b")
    models = [bench_model(label="a"), bench_model(label="b"), bench_model(label="c")]
    settings = BenchSettings(threads=(1,), prompt_tokens=(8,), gen_tokens=(0,), out=out)
    with pytest.raises(RunFailure, match="SIGSEGV"):
        execute_bench(settings, models, worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert workers.made_for == [("a", 1), ("b", 1)]  # c never started
    assert report["status"] == "crashed"
    assert [(r["model"], r["test"]) for r in report["results"]] == [("a", "pp8")]


def test_every_models_context_is_checked_before_the_first_loads(tmp_path: Path) -> None:
    workers = SpeedWorkers()
    models = [bench_model(label="a"), bench_model(n_ctx_train=256, label="b")]
    settings = BenchSettings(prompt_tokens=(512,), gen_tokens=(0,), out=tmp_path / "b.json")
    with pytest.raises(UserError, match=r"training context \(256\)"):
        execute_bench(settings, models, worker_factory=workers, root=tmp_path)
    assert workers.made == [] and not (tmp_path / "b.json").exists()


def test_the_default_file_names_the_first_model_and_how_many_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    models = [bench_model(label="a"), bench_model(label="b"), bench_model(label="c")]
    settings = BenchSettings(threads=(1,), prompt_tokens=(8,), gen_tokens=(0,), repetitions=1)
    result = execute_bench(settings, models, worker_factory=SpeedWorkers(), root=tmp_path)
    assert result.path.parent == Path("runs") and result.path.name.endswith("-a+2-bench.json")
