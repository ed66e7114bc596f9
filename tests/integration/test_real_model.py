"""The real SmolLM2-135M through llama.cpp: outputs, timings, memory, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.scoring.edgejson import SCORE_NAMES
from edgebench.system.identity import config_of
from tests.helpers.cli import edgebench_process as edgebench
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

LIMIT = 4


@pytest.fixture(scope="module")
def two_runs(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The same small run twice, to check real figures and determinism."""
    runs = []
    for name in ("first", "second"):
        out = tmp_path_factory.mktemp("runs") / name
        done = edgebench("run", "--limit", str(LIMIT), "--threads", "2", "--out", str(out))
        assert done.returncode == 0, done.stderr
        runs.append(out)
    return runs


def test_summary_has_real_values(two_runs: list[Path]) -> None:
    summary = json.loads((two_runs[0] / "summary.json").read_text())
    (arm,) = summary["arms"]
    assert arm["n_examples"] == LIMIT and summary["status"] == "completed"
    task = arm["families"]["edgejson"]
    for metric in SCORE_NAMES:
        assert 0.0 <= task["overall"][metric] <= 1.0
    assert task["groups"]["complexity"] and task["groups"]["schema"]
    perf = arm["perf"]
    assert 0 < perf["load_s"] < 30
    # 98 MB of weights, mmapped: the file-backed part holds most of them.
    assert 100 < perf["peak_rss_mb"] < 2000
    assert perf["peak_rss_file_mb"] > 50 and perf["peak_rss_anon_mb"] > 10
    for key in ("ttft_s", "latency_s", "prefill_tok_s", "decode_tok_s"):
        assert perf[key]["p50"] > 0 and perf[key]["p95"] >= perf[key]["p50"]
    assert perf["prompt_tokens_total"] > LIMIT * 50 and perf["output_tokens_total"] > 0


def test_outputs_are_real_json_attempts(two_runs: list[Path]) -> None:
    samples = final_samples(two_runs[0])
    assert all(s["raw_output"].strip() for s in samples)
    assert any(s["parse"]["ok"] for s in samples)
    assert all(s["finish_reason"] in ("stop", "json_complete", "loop", "length") for s in samples)


def test_same_settings_give_identical_outputs(two_runs: list[Path]) -> None:
    first, second = (final_samples(run) for run in two_runs)
    assert [s["raw_output"] for s in first] == [s["raw_output"] for s in second]


def test_manifest_device_block_is_filled(two_runs: list[Path]) -> None:
    device = json.loads((two_runs[0] / "manifest.json").read_text())["device"]
    for key in ("cpu_model", "cpu_flags", "logical_cores", "ram_total_mb", "os", "kernel"):
        assert device[key], key
    assert device["threads_used"] == 2 and device["python"]
    runtime = device["runtime"]
    assert runtime["name"] == "llama.cpp" and "CPU :" in runtime["system_info"]
    assert runtime["llama_cpp_python"] and runtime["ggml_version"]


def test_both_runs_name_this_machine_by_one_fingerprint(two_runs: list[Path]) -> None:
    """The identity is stable from run to run, its config covering the real build."""
    first, second = (json.loads((run / "manifest.json").read_text())["device"] for run in two_runs)
    assert first["identity"] == second["identity"]
    assert first["identity"]["unit_sources"] and first["build_features"]
    assert first["identity"]["config_id"] == config_of(first)


def test_decode_rate_agrees_with_llama_cpp_counters(two_runs: list[Path]) -> None:
    """edgebench's decode tokens/s (its own timestamps) vs llama.cpp's t_eval counters."""
    samples = final_samples(two_runs[0])
    ours_steps = sum(s["generated_tokens"] - 1 for s in samples)
    ours_time = sum(s["timings"]["latency_s"] - s["timings"]["ttft_s"] for s in samples)
    llama_steps = sum(s["runtime_counters"]["n_eval"] for s in samples)
    llama_time = sum(s["runtime_counters"]["t_eval_ms"] for s in samples) / 1000
    assert ours_steps == llama_steps
    ours, theirs = ours_steps / ours_time, llama_steps / llama_time
    assert abs(ours - theirs) / theirs < 0.05, (ours, theirs)


def test_prompt_longer_than_context_is_a_one_line_error(smollm2: Path, tmp_path: Path) -> None:
    done = edgebench("run", "--limit", "2", "--n-ctx", "128", "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "does not fit --n-ctx (128)" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
