"""The sustained-run options on the command line: `bench --duration` (90s, 10m, 1h, plain
seconds) with its first/last minute in every `--format`, `--cooldown` and its alias
`--delay`, `--wait-cool` on bench and run, and every bad value as a one-line error."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from edgebench.bench import execute as bench
from edgebench.cli.app import main
from edgebench.cli.options import parse_duration
from edgebench.errors import UserError
from edgebench.report.bench_table import SUSTAINED_HEADERS
from edgebench.runfolder.records import BenchRecord, BenchRow
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.bench_fakes import TimedWorker, fake_start_worker
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.gguf_factory import isolate, write_gguf
from tests.helpers.waits import FakeTime


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str]) -> None:
    isolate(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)  # the default bench file goes under runs/ here


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("10m", 600), ("1h", 3600), ("600", 600), ("1.5m", 90), (" 2M ", 120)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "--duration") == seconds


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["bench", "--duration", "0"], ["--duration '0'", "longer than 0"]),
        (["bench", "--duration", "0m"], ["--duration '0m'", "longer than 0"]),
        (["bench", "--duration", "10x"], ["--duration '10x'", "90s, 10m, 1h"]),
        (["bench", "--duration", "-5m"], ["--duration '-5m'", "90s, 10m, 1h"]),
        (["bench", "--duration", "ten"], ["--duration 'ten'"]),
        (["bench", "--cooldown", "-1"], ["--cooldown"]),
        (["bench", "--delay", "-1"], ["--delay"]),
        (["bench", "--wait-cool", "-5"], ["--wait-cool -5", "between 0 and 150"]),
        (["bench", "--wait-cool", "500"], ["--wait-cool 500"]),
        (["bench", "--wait-cool-timeout", "0"], ["--wait-cool-timeout"]),
        (["run", "--delay", "-2"], ["--delay"]),
        (["run", "--cooldown", "-2"], ["--cooldown"]),
        (["run", "--wait-cool", "-5"], ["--wait-cool -5", "between 0 and 150"]),
        (["run", "--wait-cool-timeout", "-1"], ["--wait-cool-timeout"]),
    ],
)
def test_bad_values_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], fragments: list[str]
) -> None:
    code, err = run_cli(capsys, *args)
    assert_one_line_error(code, err, *fragments)


def _sustained_bench(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    *args: str,
) -> tuple[str, str, FakeTime]:
    """`bench -n 100 --duration 3m` on a fake that runs 100 tok/s for a minute, then 80,
    on a fake clock; (stdout, stderr, the clock)."""
    time = FakeTime(temperatures=(None,))
    monkeypatch.setattr(bench, "Waits", time.waits)

    def worker(model: ModelUnderTest, threads: int) -> TimedWorker:
        return TimedWorker(time, lambda t: 100.0 if t < 60 else 80.0)

    fake_start_worker(monkeypatch, worker)
    model = write_gguf(tmp_path / "alpha.gguf")
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "-m", str(model), "-t", "1", "-p", "0", "-n", "100", *args])
    captured = capsys.readouterr()
    assert exit_info.value.code in (0, None), captured.err
    return captured.out, captured.err, time


def test_duration_in_the_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "b.json"
    stdout, _, _ = _sustained_bench(
        capsys, monkeypatch, tmp_path, "--duration", "3m", "-o", str(out)
    )
    line = next(line for line in stdout.splitlines() if "tg100" in line)
    assert "100.00" in line and "80.00" in line and "20.0%" in line
    assert all(h in stdout for h in SUSTAINED_HEADERS)
    assert "first and last minute" in " ".join(stdout.split())
    record = BenchRecord.from_json(json.loads(out.read_text()))
    (row,) = record.results
    assert row.drop_pct == pytest.approx(20.0) and row.overlap_s == 0.0
    assert record.settings["duration_s"] == 180.0


@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
def test_duration_in_every_format(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fmt: str,
) -> None:
    stdout, _, _ = _sustained_bench(
        capsys, monkeypatch, tmp_path, "--duration", "180", "--format", fmt
    )
    if fmt == "json":
        (row,) = [BenchRow.from_json(r) for r in json.loads(stdout)]
        assert row.first_minute_tok_s == pytest.approx(100.0)
        assert row.last_minute_tok_s == pytest.approx(80.0)
        assert len(row.t_start) == len(row.tok_s) == row.repetitions
    elif fmt == "csv":
        (row,) = list(csv.DictReader(io.StringIO(stdout)))
        assert float(row["drop_pct"]) == pytest.approx(20.0)
        assert float(row["first_minute_tok_s"]) == pytest.approx(100.0)
        assert "t_start" not in row  # the lists stay in the JSON
    else:
        header, _, body = stdout.splitlines()
        cells = dict(
            zip(
                [c.strip() for c in header.strip("|").split("|")],
                [c.strip() for c in body.strip("|").split("|")],
                strict=True,
            )
        )
        assert cells["1st min t/s"] == "100.00" and cells["last min t/s"] == "80.00"
        assert cells["drop"] == "20.0%"


def test_a_90_second_run_says_its_minutes_overlap(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stdout, _, _ = _sustained_bench(
        capsys, monkeypatch, tmp_path, "--duration", "90s", "--format", "md"
    )
    assert "(overlap 30 s)" in stdout


def test_cooldown_and_its_alias_pause_between_repetitions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for option in ("--cooldown", "--delay"):
        out = str(tmp_path / f"{option}.json")
        _, _, time = _sustained_bench(
            capsys, monkeypatch, tmp_path, "-r", "3", option, "7", "-o", out
        )
        assert time.sleeps == [7.0, 7.0]


def test_wait_cool_without_a_thermometer_says_so_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "b.json"
    _, err, _ = _sustained_bench(
        capsys, monkeypatch, tmp_path, "-r", "1", "--wait-cool", "45", "-o", str(out)
    )
    assert "--wait-cool 45: no CPU temperature is readable here" in " ".join(err.split())
    assert json.loads(out.read_text())["wait_cool"]["outcome"] == "unreadable"


def test_parse_duration_names_the_option() -> None:
    with pytest.raises(UserError, match=r"^--duration '1d': give a time"):
        parse_duration("1d", "--duration")
