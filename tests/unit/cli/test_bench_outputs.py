"""`edgebench bench` in this process with in-process fake workers: several models per
call (repeated or comma-separated, as `run` takes them) in one table with their
quantization, `--format md|csv|json` parsed back, a bad format in one line, and SIGTERM
or SIGHUP keeping what was measured."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from edgebench.cli.app import main
from edgebench.report.bench_table import CSV_FIELDS, HEADERS
from edgebench.runfolder.records import BenchRecord, BenchRow
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.bench_fakes import SpeedWorkers, fake_start_worker
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.gguf_factory import isolate, write_gguf

SMALL = ("-t", "1", "-p", "8", "-n", "2", "-r", "2")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str]) -> None:
    isolate(monkeypatch, tmp_path)


def two_models(tmp_path: Path) -> tuple[Path, Path]:
    return write_gguf(tmp_path / "alpha.gguf"), write_gguf(tmp_path / "beta.gguf")


def bench_out(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:  # exit code, stdout, stderr
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", *args])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


@pytest.mark.parametrize("joined", [True, False], ids=["comma-separated", "repeated"])
def test_several_models_one_table_each_in_its_own_workers(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    joined: bool,
) -> None:
    workers = SpeedWorkers()
    fake_start_worker(monkeypatch, workers)
    a, b = two_models(tmp_path)
    models = ["--model", f"{a},{b}"] if joined else ["--model", str(a), "-m", str(b)]
    out = tmp_path / "bench.json"
    code, stdout, err = bench_out(capsys, *models, *SMALL, "--out", str(out))
    assert code == 0, err
    assert workers.made_for == [("alpha", 1), ("beta", 1)]  # one worker per model
    lines = [line for line in stdout.splitlines() if "pp8" in line or "tg2" in line]
    assert [line.strip("│ ").split()[0] for line in lines] == ["alpha", "alpha", "beta", "beta"]
    assert "quant" in stdout
    record = BenchRecord.from_json(json.loads(out.read_text()))
    assert [m.label for m in record.models] == ["alpha", "beta"]
    assert [(w.model, w.status) for w in record.workers] == [
        ("alpha", "completed"),
        ("beta", "completed"),
    ]
    assert all(w.memory is not None and w.memory.peak_rss_mb > 0 for w in record.workers)
    assert record.settings["model"] == f"{a},{b}"
    assert {r.quantization for r in record.results} == {record.models[0].quantization}
    assert record.models[0].quantization  # read from the GGUF header


def test_every_format_parses_back(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_start_worker(monkeypatch, SpeedWorkers())
    a, b = two_models(tmp_path)
    printed = {}
    for fmt in ("md", "csv", "json"):
        out = tmp_path / f"bench-{fmt}.json"
        code, stdout, err = bench_out(
            capsys, "-m", f"{a},{b}", *SMALL, "--format", fmt, "-o", str(out)
        )
        assert code == 0, err
        assert f"results: {out}" in " ".join(err.split())
        printed[fmt] = stdout
    rows = [BenchRow.from_json(row) for row in json.loads(printed["json"])]
    assert [(r.model, r.test, r.threads) for r in rows] == [
        ("alpha", "pp8", 1),
        ("alpha", "tg2", 1),
        ("beta", "pp8", 1),
        ("beta", "tg2", 1),
    ]
    assert all(r.quantization and r.tok_s_mean and len(r.tok_s) == 2 for r in rows)
    assert all(r.device for r in rows)

    table = list(csv.DictReader(io.StringIO(printed["csv"])))
    assert tuple(table[0]) == CSV_FIELDS
    assert [(t["model"], t["test"]) for t in table] == [(r.model, r.test) for r in rows]
    assert [float(t["tok_s_mean"]) for t in table] == pytest.approx([r.tok_s_mean for r in rows])

    header, rule, *body = printed["md"].splitlines()
    assert [c.strip() for c in header.strip("|").split("|")] == list(HEADERS)
    assert set(rule.replace("|", "").split()) <= {"---", "---:"}
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in body]
    assert [(c[0], c[1], c[6]) for c in cells] == [(r.model, r.quantization, r.test) for r in rows]
    assert [c[7] for c in cells] == [f"{r.tok_s_mean:.2f} ± {r.tok_s_std:.2f}" for r in rows]


@pytest.mark.parametrize("value", ["html", "MD", "", "table,md"])
def test_a_bad_format_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    code, err = run_cli(capsys, "bench", "--format", value, *SMALL)
    assert_one_line_error(code, err, "--format", "table, md, csv, json")


def test_json_prints_the_rows_as_format_json_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`--json`, as on every command that prints results: the rows of `--format json`."""
    fake_start_worker(monkeypatch, SpeedWorkers())
    a, _ = two_models(tmp_path)
    code, stdout, err = bench_out(capsys, "-m", str(a), *SMALL, "--json")
    assert code == 0, err
    rows = [BenchRow.from_json(row) for row in json.loads(stdout)]
    assert [(r.model, r.test) for r in rows] == [("alpha", "pp8"), ("alpha", "tg2")]


def test_json_with_another_format_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = run_cli(capsys, "bench", "--json", "--format", "md", *SMALL)
    assert_one_line_error(code, err, "--json", "--format md")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_keeps_what_was_measured(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    signum: int,
) -> None:
    """The signal arrives while the second model is measured: the first model's rows are
    kept, the file says `interrupted`, and one line says where."""
    workers = SpeedWorkers()

    def factory(model: ModelUnderTest, threads: int) -> Any:
        worker = workers(model, threads)
        if model.label == "beta":

            def stopped(plan: Any) -> Any:
                os.kill(os.getpid(), signum)
                time.sleep(5)  # the handler raises before this ends
                raise AssertionError("the signal did not stop the bench")

            worker.speed_test = stopped
        return worker

    fake_start_worker(monkeypatch, factory)
    a, b = two_models(tmp_path)
    out = tmp_path / "bench.json"
    code, err = run_cli(capsys, "bench", "-m", f"{a},{b}", *SMALL, "-o", str(out))
    assert code == 130
    last = err.strip().splitlines()[-1]
    assert last == f"interrupted: what was measured is kept in {out}"
    assert "Traceback" not in err
    record = BenchRecord.from_json(json.loads(out.read_text()))
    assert record.status == "interrupted"
    assert {r.model for r in record.results} == {"alpha"}
    assert [w.status for w in record.workers] == ["completed", "interrupted"]
    assert signal.getsignal(signum) is not signal.default_int_handler  # handler restored
