"""`edgebench bench` on an OpenVINO folder in this process: the converted folder is a fake
(tests/helpers/openvino_export_fakes.py), the pipeline the fake `openvino_genai`
(tests/helpers/openvino_fakes.py) in in-process workers. The rows come from its
PerfMetrics and say so in the record, the table and the card's view; a ppN @ dD row is
refused in one line before anything loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.openvino import OpenVinoBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.models.openvino_model import variant_dir
from edgebench.report.bench_section import load_bench
from edgebench.runner.spec import ModelUnderTest
from edgebench.runtimes import OPENVINO
from tests.helpers import openvino_fakes as fakes
from tests.helpers.bench_fakes import fake_start_worker
from tests.helpers.bench_report import completed_bench
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of
from tests.helpers.gguf_factory import isolate
from tests.helpers.openvino_export_fakes import BASE, exported

MODEL = f"{BASE}@openvino-int4"


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """The fake folder in an isolated cache and workers on the fake pipeline; the thread
    counts of the workers started."""
    isolate(monkeypatch, tmp_path)
    folder = exported(variant_dir(BASE, "int4"))
    (folder / "config.json").write_text(json.dumps({"vocab_size": 256 + fakes.OFFSET}))
    script = fakes.install(monkeypatch)
    started: list[int] = []

    def worker(model: ModelUnderTest, threads: int) -> Any:
        started.append(threads)
        backend = OpenVinoBackend(str(model.path), n_threads=threads)
        return InProcessWorker(backend, clock=script.clock)

    fake_start_worker(monkeypatch, worker)
    return started


def test_openvino_rows_are_timed_by_perf_metrics_and_say_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, made: list[int]
) -> None:
    out = tmp_path / "bench.json"
    args = ["-m", MODEL, "-t", "2", "-p", "8", "-n", "4", "-d", "0", "-r", "2", "-o", str(out)]
    shown = stdout_of(capsys, "bench", *args, "--format", "md")
    assert "| OpenVINO GenAI CPU |" in shown and "| pp8 |" in shown
    report = completed_bench(out, (2,), ("pp8", "tg4"))
    pp, tg = report["results"]
    assert pp["tok_s_mean"] == pytest.approx(8 / fakes.PREFILL_S)
    assert tg["tok_s_mean"] == pytest.approx(1 / fakes.STEP_S)
    assert pp["backend"] == "OpenVINO GenAI" and pp["peak_rss_mb"] > 0
    assert report["settings"]["timing"] == {"openvino": OPENVINO.bench_timing}
    # the card's and report's view of the file says how the rows were timed
    assert f"OpenVINO GenAI rows: {OPENVINO.bench_timing}" in load_bench(out).caption
    assert made == [2]


def test_the_table_caption_says_how_openvino_rows_were_timed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, made: list[int]
) -> None:
    out = tmp_path / "bench.json"
    shown = stdout_of(capsys, "bench", "-m", MODEL, "-p", "8", "-n", "0", "-r", "1", "-o", str(out))
    assert "OpenVINO GenAI rows: OpenVINO GenAI's own PerfMetrics" in " ".join(shown.split())


def test_pp_after_a_filled_cache_is_refused_before_anything_loads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, made: list[int]
) -> None:
    out = tmp_path / "bench.json"
    code, err = run_cli(
        capsys, "bench", "-m", MODEL, "-p", "8", "-n", "4", "-d", "16", "-o", str(out)
    )
    assert_one_line_error(
        code, err, f"{MODEL}: pp8 @ d16 cannot be measured on OpenVINO GenAI", "--prompt-tokens 0"
    )
    assert made == [] and not out.exists()


def test_tg_after_a_filled_cache_is_measured(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, made: list[int]
) -> None:
    out = tmp_path / "bench.json"
    stdout_of(
        capsys, "bench", "-m", MODEL, "-p", "0", "-n", "4", "-d", "16", "-r", "1", "-o", str(out)
    )
    (row,) = json.loads(out.read_text())["results"]
    assert row["test"] == "tg4 @ d16" and row["tok_s_mean"] == pytest.approx(1 / fakes.STEP_S)
