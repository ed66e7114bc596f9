"""`edgebench bench` with the fake backend: rows, statistics, order, JSON and errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gguf_factory import SAMPLE_TENSORS, sample_metadata, write_gguf
from rich.console import Console
from test_cli_run_errors import assert_one_line_error, run_cli

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.speed import ProbeVocab
from edgebench.backends.speed_test import SpeedPlan, SpeedTest, measure_speed, rate_stats
from edgebench.backends.worker import BackendWorker, InProcessWorker
from edgebench.errors import UserError
from edgebench.isolation import WorkerDied
from edgebench.prompts import STYLE_COMPLETION, PromptFormat
from edgebench.report.bench_table import bench_notes, bench_table
from edgebench.runner.bench import (
    BenchSettings,
    bench_context,
    execute_bench,
    pin_environment,
    plan_tests,
)
from edgebench.runner.run import ModelUnderTest
from edgebench.system.cpu_share import CpuMeter

TIMINGS = FakeTimings(per_prompt_token=0.002, per_output_token=0.01)


def fake() -> FakeBackend:
    backend = FakeBackend(timings=TIMINGS)
    backend.load(4096)
    return backend


def model(n_ctx_train: int | None = 8192) -> ModelUnderTest:
    return ModelUnderTest(
        label="fake-model",
        path=Path("/models/fake.gguf"),
        sha256="0" * 64,
        size_bytes=98_362_432,
        prompt_format=PromptFormat(style=STYLE_COMPLETION),
        n_ctx_train=n_ctx_train,
        backend="fake",
        details={"parameters": 134_515_008, "quantization": "Q4_1"},
    )


def test_rates_come_from_the_probe_clock() -> None:
    backend = fake()
    plan = SpeedPlan((SpeedTest("pp", 512), SpeedTest("tg", 128)), repetitions=3, warmup=1)
    pp, tg = measure_speed(backend, plan, clock=backend.virtual_clock)
    assert pp.test.name == "pp512" and tg.test.name == "tg128"
    assert pp.tok_s == pytest.approx([500.0] * 3)  # 1 / 0.002 s per prompt token
    assert tg.tok_s == pytest.approx([100.0] * 3)  # 1 / 0.01 s per generated token
    row = tg.to_dict()
    assert row["tok_s_mean"] == pytest.approx(100.0) and row["tok_s_std"] == pytest.approx(0)
    assert len(row["cpu_others"]) == 3 and len(row["seconds"]) == 3


def test_order_warmup_then_round_robin_from_an_empty_cache() -> None:
    backend = fake()
    plan = SpeedPlan((SpeedTest("pp", 4), SpeedTest("tg", 3)), repetitions=2, warmup=1)
    measure_speed(backend, plan, clock=backend.virtual_clock)
    sizes = [len(tokens) for tokens in backend.evaluated]
    # warm-up pp4, warm-up tg3 (3 single steps), then pp4, tg3, pp4, tg3
    assert sizes == [4, 1, 1, 1] * 3
    pp_tokens = backend.evaluated[0]
    assert pp_tokens[0] == FakeBackend.VOCAB.bos  # a sequence starts with BOS
    assert all(0 <= t < FakeBackend.VOCAB.size for t in pp_tokens)
    assert backend.evaluated[4] == pp_tokens  # the same ids every repetition
    assert backend.cached == 0  # the cache is left empty


def test_depth_fills_the_cache_untimed() -> None:
    backend = fake()
    plan = SpeedPlan((SpeedTest("tg", 4, depth=100),), repetitions=2, warmup=0)
    (result,) = measure_speed(backend, plan, clock=backend.virtual_clock)
    assert result.test.name == "tg4 @ d100"
    assert result.tok_s == pytest.approx([100.0, 100.0])  # the depth prefill is not timed
    assert [len(t) for t in backend.evaluated] == [100, 1, 1, 1, 1] * 2


def test_rate_stats() -> None:
    stats = rate_stats([90.0, 100.0, 110.0])
    assert stats["tok_s_mean"] == pytest.approx(100.0)
    assert stats["tok_s_std"] == pytest.approx(10.0)  # sample std (n - 1), as llama-bench
    assert stats["tok_s_cv"] == pytest.approx(0.1)
    assert rate_stats([100.0])["tok_s_std"] is None


def test_cpu_meter_shares_are_fractions() -> None:
    meter = CpuMeter()
    before = meter.snapshot()
    sum(i * i for i in range(200_000))
    share = meter.share(before, meter.snapshot())
    for value in (share.others, share.steal):
        assert value is None or 0.0 <= value <= 1.0


def test_backend_without_speed_probe_is_a_user_error() -> None:
    class NoProbe:
        name = "plain"

    with pytest.raises(UserError, match="the plain backend cannot run `edgebench bench`"):
        measure_speed(NoProbe(), SpeedPlan((SpeedTest("tg", 1),)))  # type: ignore[arg-type]


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


class Workers:
    """In-process workers on fake backends, one per thread count."""

    def __init__(self, die_at: int | None = None) -> None:
        self.die_at = die_at
        self.made: list[int] = []

    def __call__(self, threads: int) -> Any:
        self.made.append(threads)
        backend = FakeBackend(
            timings=FakeTimings(per_prompt_token=0.002 / threads, per_output_token=0.01)
        )
        worker = InProcessWorker(backend, clock=backend.virtual_clock)
        if threads == self.die_at:

            def died(plan: SpeedPlan) -> Any:
                raise WorkerDied(-11, "speed_test")

            worker.speed_test = died  # type: ignore[method-assign]
        return worker


def test_bench_writes_json_per_thread_count(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(64,), gen_tokens=(16,), repetitions=3, out=out
    )
    result = execute_bench(settings, model(), worker_factory=Workers(), root=tmp_path)
    report = json.loads(out.read_text())
    assert report == json.loads(json.dumps(result.report))
    assert report["status"] == "completed"
    rows = {(r["threads"], r["test"]): r for r in report["results"]}
    assert set(rows) == {(1, "pp64"), (1, "tg16"), (2, "pp64"), (2, "tg16")}
    assert rows[(1, "pp64")]["tok_s_mean"] == pytest.approx(500.0)
    assert rows[(2, "pp64")]["tok_s_mean"] == pytest.approx(1000.0)
    assert rows[(2, "tg16")]["tok_s"] == pytest.approx([100.0] * 3)
    assert all(r["peak_rss_mb"] > 0 and r["repetitions"] == 3 for r in rows.values())
    assert [w["threads"] for w in report["workers"]] == [1, 2]
    assert all(w["status"] == "completed" and w["n_ctx"] == 64 for w in report["workers"])
    assert report["settings"]["tests"] == ["pp64", "tg16"]
    assert report["device"]["threads_used"] == [1, 2]
    assert report["device"]["runtime"] == {"name": "fake"}
    assert report["model"]["label"] == "fake-model"


def test_a_crashed_worker_keeps_what_was_measured(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(
        threads=(1, 2, 4), prompt_tokens=(8,), gen_tokens=(0,), interleave=False, out=out
    )
    workers = Workers(die_at=2)
    with pytest.raises(UserError, match=r"SIGSEGV.*kept in"):
        execute_bench(settings, model(), worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert workers.made == [1, 2]  # one thread count after another, stopped at the crash
    assert report["status"] == "crashed"
    assert [w["status"] for w in report["workers"]] == ["completed", "crashed"]
    assert [(r["threads"], r["test"]) for r in report["results"]] == [(1, "pp8")]


def test_interleaved_thread_counts_alternate_repetitions(tmp_path: Path) -> None:
    log: list[tuple[int, int]] = []  # (threads, tokens) of every evaluation, in order

    def factory(threads: int) -> Any:
        worker = Workers()(threads)
        evaluate = worker.backend.probe_eval

        def logged(tokens: Any) -> None:
            log.append((threads, len(tokens)))
            evaluate(tokens)

        worker.backend.probe_eval = logged
        return worker

    settings = BenchSettings(
        threads=(1, 2), prompt_tokens=(4,), gen_tokens=(2,), repetitions=2, out=tmp_path / "b"
    )
    report = execute_bench(settings, model(), worker_factory=factory, root=tmp_path).report
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
    workers = Workers(die_at=2)
    with pytest.raises(UserError, match="SIGSEGV"):
        execute_bench(settings, model(), worker_factory=workers, root=tmp_path)
    report = json.loads(out.read_text())
    assert workers.made == [1, 2, 4]  # all loaded first
    assert [w["status"] for w in report["workers"]] == ["stopped", "crashed", "stopped"]
    assert report["results"] == []  # the crash came during the warm-up: nothing timed
    assert all(w["memory"] is not None for w in report["workers"])


def test_an_existing_output_file_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    out.write_text("{}")
    with pytest.raises(UserError, match="already exists"):
        execute_bench(BenchSettings(out=out), model(), worker_factory=Workers(), root=tmp_path)
    assert out.read_text() == "{}"


def test_table_and_notes_flag_rows_that_are_not_clean(tmp_path: Path) -> None:
    settings = BenchSettings(threads=(2,), out=tmp_path / "b.json")
    report = execute_bench(settings, model(), worker_factory=Workers(), root=tmp_path).report
    report["results"][1].update(tok_s_cv=0.08, cpu_others_max=0.3)
    console = Console(width=200, record=True)
    console.print(bench_table(report))
    text = console.export_text()
    assert "pp512" in text and "tg128" in text
    assert "93.81 MiB" in text and "134.52 M" in text and "fake CPU" in text
    assert "1000.00 ± 0.00" in text and "8.0%" in text and "30.0%" in text
    (note,) = bench_notes(report)
    assert note.startswith("tg128 (threads 2): spread 8.0% of the mean")
    assert "30% of the CPU" in note
    assert "size: the model file" in text


def test_size_column_is_llama_benchs_when_the_runtime_reports_it(tmp_path: Path) -> None:
    settings = BenchSettings(threads=(2,), out=tmp_path / "b.json")
    report = execute_bench(settings, model(), worker_factory=Workers(), root=tmp_path).report
    report["workers"][0]["runtime"]["model_size_bytes"] = 96_571_392  # llama_model_size
    console = Console(width=200, record=True)
    console.print(bench_table(report))
    text = console.export_text()
    assert "92.10 MiB" in text and "93.81 MiB" not in text
    assert "as llama-bench shows" in text


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--threads", "0"], "--threads: 0 is below the minimum of 1"),
        (["--threads", "two"], "--threads: 'two' is not a whole number"),
        (["--prompt-tokens", "128,x"], "--prompt-tokens: 'x' is not a whole number"),
        (["--gen-tokens", "-5"], "--gen-tokens: -5 is below the minimum of 0"),
        (["-p", "0", "-n", "0"], "nothing to measure"),
        (["--depth", ","], "--depth: give at least one number"),
        (["--model", "/nope/model.gguf"], "/nope/model.gguf"),
    ],
)
def test_bad_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    code, err = run_cli(capsys, "bench", *args)
    assert_one_line_error(code, err, fragment)


def test_context_larger_than_the_model_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    metadata = sample_metadata()
    metadata["llama.context_length"] = 256
    path = write_gguf(tmp_path / "tiny.gguf", metadata, tensors=SAMPLE_TENSORS)
    code, err = run_cli(capsys, "bench", "--model", str(path), "-p", "512", "-n", "0")
    assert_one_line_error(code, err, "training context (256)")


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc/PID/environ")
def test_pinning_reaches_the_worker_unless_the_user_set_the_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("OMP_PROC_BIND", "OMP_WAIT_POLICY", "GOMP_CPU_AFFINITY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_PLACES", "threads")
    assert pin_environment(True) == {"OMP_PROC_BIND": "close"}
    assert pin_environment(False) == {}
    seen: list[dict[str, str]] = []

    def factory(threads: int) -> Any:
        real = BackendWorker("fake", {})  # a real worker process: read its environment
        environ = Path(f"/proc/{real.process.pid}/environ").read_bytes().split(b"\0")
        seen.append(dict(item.decode().split("=", 1) for item in environ if b"=" in item))
        real.close()
        return Workers()(threads)

    settings = BenchSettings(threads=(2,), out=tmp_path / "b.json")
    report = execute_bench(settings, model(), worker_factory=factory, root=tmp_path).report
    expected = {"OMP_PROC_BIND": "close", "OMP_PLACES": "threads"}
    assert report["settings"]["thread_environment"] == expected
    assert seen[0]["OMP_PROC_BIND"] == "close" and seen[0]["OMP_PLACES"] == "threads"
    assert "OMP_PROC_BIND" not in os.environ  # set only while the worker starts


def test_onnx_backend_runs_the_speed_probe(tmp_path: Path) -> None:
    """ppN is one session.run of N ids on an empty past; tgN @ dD fills D ids untimed, then
    N runs of one id each on a growing past; every repetition starts from an empty past."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    from test_onnx_sampling import VOCAB, TableSession, backend_for_table

    class LoggingSession(TableSession):
        def __init__(self, table: Any) -> None:
            super().__init__(table)
            self.feeds: list[tuple[int, int]] = []  # (ids in this run, past length)

        def run(self, names: list[str], feed: dict[str, Any]) -> list[Any]:
            self.feeds.append((feed["input_ids"].shape[1], feed["past_key_values.0.key"].shape[2]))
            assert int(feed["input_ids"].max()) < VOCAB
            return super().run(names, feed)

    table = np.zeros((VOCAB, VOCAB), dtype=np.float32)
    backend = backend_for_table(tmp_path / "tiny", table)
    backend.session = session = LoggingSession(table)
    plan = SpeedPlan((SpeedTest("pp", 16), SpeedTest("tg", 3, depth=8)), repetitions=2, warmup=1)
    pp, tg = measure_speed(backend, plan)
    assert len(pp.seconds) == len(tg.seconds) == 2
    one_pp = [(16, 0)]
    one_tg = [(8, 0), (1, 8), (1, 9), (1, 10)]
    assert session.feeds == (one_pp + one_tg) * 3  # warm-up, then 2 round-robin repetitions
    assert backend.probe_vocab() == ProbeVocab(size=VOCAB, bos=None)
