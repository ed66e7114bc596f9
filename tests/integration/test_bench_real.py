"""`edgebench bench` on the real SmolLM2: rows, JSON, memory, and llama.cpp's own counters."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.backends.speed_test import SpeedPlan, SpeedTest, measure_speed
from tests.helpers.bench_report import completed_bench
from tests.helpers.cli import edgebench_ok as run_cli

pytestmark = pytest.mark.model


def test_bench_command_writes_rows_and_json(smollm2: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = run_cli("bench", "-t", "1,2", "-p", "64", "-n", "16", "-r", "2", "-o", str(out))
    assert "pp64" in done.stdout and "tg16" in done.stdout and " ± " in done.stdout
    assert "Q4_1" in done.stdout  # the quantization column, from the GGUF header
    report = completed_bench(out, (1, 2), ("pp64", "tg16"))
    for row in report["results"]:
        assert row["repetitions"] == 2 and row["tok_s_mean"] > 1
        assert row["quantization"] == "Q4_1" and row["backend"] == "llama.cpp"
        assert 50 < row["peak_rss_mb"] < 2000
    device = report["device"]
    assert device["cpu_model"] and device["ram_total_mb"] and device["kernel"]
    assert "CPU :" in device["runtime"]["system_info"]
    assert device["runtime"]["llama_cpp_python"]
    assert all(w["n_ctx"] >= 64 and w["load_s"] > 0 for w in report["workers"])


def test_probe_timings_agree_with_llama_cpp_counters(smollm2: Path) -> None:
    """Our clock around the probe vs llama.cpp's t_p_eval / t_eval for the same work."""
    backend = LlamaCppBackend(str(smollm2), n_threads=2)
    backend.load(256)
    L = backend.L
    try:
        for kind, n in (("pp", 128), ("tg", 32)):
            # warm up first, then count exactly one timed repetition (no warm-up inside)
            measure_speed(backend, SpeedPlan((SpeedTest(kind, n),), repetitions=0, warmup=1))
            plan = SpeedPlan((SpeedTest(kind, n),), repetitions=1, warmup=0)
            L.llama_perf_context_reset(backend.ctx)
            (result,) = measure_speed(backend, plan)
            perf = L.llama_perf_context(backend.ctx)
            if kind == "pp":
                assert perf.n_p_eval == n
                theirs = perf.n_p_eval / (perf.t_p_eval_ms / 1000)
            else:
                assert perf.n_eval == n
                theirs = perf.n_eval / (perf.t_eval_ms / 1000)
            ours = result.tok_s[0]
            assert abs(ours - theirs) / theirs < 0.05, (kind, ours, theirs)
    finally:
        backend.close()
