"""The terminal view of `edgebench bench`: llama-bench's columns, and the rows flagged as
not clean (a wide spread, other processes on the CPU) with a note saying why."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from edgebench.bench.execute import BenchSettings, execute_bench
from edgebench.report.bench_table import (
    BUSY_SHARE,
    NOISY_CV,
    bench_notes,
    bench_table,
    flags,
    speed_rows,
)
from edgebench.runfolder.records import BenchRecord, BenchRow
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.bench_fakes import SpeedWorkers, bench_model


def report_of(tmp_path: Path) -> dict[str, Any]:
    """A completed bench at 2 threads: pp512 and tg128 on the fake backend."""
    settings = BenchSettings(threads=(2,), out=tmp_path / "b.json")
    return execute_bench(
        settings, [bench_model()], worker_factory=SpeedWorkers(), root=tmp_path
    ).report


def text_of(report: dict[str, Any]) -> str:
    console = Console(width=200, record=True)
    console.print(bench_table(BenchRecord.from_json(report)))
    return console.export_text()


def test_table_and_notes_flag_rows_that_are_not_clean(tmp_path: Path) -> None:
    report = report_of(tmp_path)
    # The bench measured this machine's real CPU share of other processes: set both rows'
    # figures, so the test does not depend on what else runs meanwhile.
    report["results"][0].update(tok_s_cv=0.0, cpu_others_max=0.0)
    report["results"][1].update(tok_s_cv=0.08, cpu_others_max=0.3)
    text = text_of(report)
    assert "pp512" in text and "tg128" in text
    assert "93.81 MiB" in text and "134.52 M" in text and "fake CPU" in text and "Q4_1" in text
    assert "1000.00 ± 0.00" in text and "8.0%" in text and "30.0%" in text
    (note,) = bench_notes(BenchRecord.from_json(report))
    assert note.startswith("tg128 (threads 2): spread 8.0% of the mean")
    assert "30% of the CPU" in note
    assert "as llama-bench shows" in text


def test_size_column_is_llama_benchs_when_the_runtime_reports_it(tmp_path: Path) -> None:
    def factory(model: ModelUnderTest, threads: int) -> Any:
        worker = SpeedWorkers()(model, threads)
        load = worker.load

        def load_counted(n_ctx: int) -> Any:
            info, seconds = load(n_ctx)
            runtime = {**info.runtime, "model_size_bytes": 96_571_392}  # llama_model_size
            return replace(info, runtime=runtime), seconds

        worker.load = load_counted
        return worker

    settings = BenchSettings(threads=(2,), out=tmp_path / "b.json")
    report = execute_bench(settings, [bench_model()], worker_factory=factory, root=tmp_path).report
    text = text_of(report)
    assert "92.10 MiB" in text and "93.81 MiB" not in text


def test_a_format_1_file_renders_with_its_one_model(tmp_path: Path) -> None:
    """Bench files written before several models per call: `model`, rows without it."""
    report = report_of(tmp_path)
    report["model"] = report.pop("models")[0]
    report["format"] = 1
    for row in report["results"]:
        for name in ("model", "quantization", "backend", "size_bytes", "parameters"):
            del row[name]
    rows = speed_rows(BenchRecord.from_json(report))
    assert {(r.model, r.quantization, r.size_bytes) for r in rows} == {
        ("fake-model", "Q4_1", 98_362_432)
    }
    assert "Q4_1" in text_of(report)


# a row's required fields; the cases set the two figures flags read
_ROW = {"threads": 1, "test": "tg1", "kind": "tg", "n_tokens": 1, "depth": 0, "repetitions": 1}
_ROW |= {"tok_s_mean": None, "tok_s_std": None, "tok_s_cv": None}


@pytest.mark.parametrize(
    ("row", "reasons"),
    [
        ({}, []),
        ({"tok_s_cv": None, "cpu_others_max": None}, []),
        ({"tok_s_cv": NOISY_CV, "cpu_others_max": BUSY_SHARE}, []),  # at the limit: clean
        ({"tok_s_cv": NOISY_CV + 0.001}, ["spread 5.1% of the mean"]),
        ({"cpu_others_max": BUSY_SHARE + 0.01}, ["other processes took up to 6% of the CPU"]),
        (
            {"tok_s_cv": 0.2, "cpu_others_max": 0.5},
            ["spread 20.0% of the mean", "other processes took up to 50% of the CPU"],
        ),
    ],
)
def test_a_row_is_flagged_above_the_spread_or_contention_limit(
    row: dict[str, Any], reasons: list[str]
) -> None:
    assert flags(BenchRow.from_json({**_ROW, **row})) == reasons
