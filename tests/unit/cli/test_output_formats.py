"""Compact by default, and `--format table|md|csv|json`: a three-arm `run` prints one
screen (the scores with their intervals, one performance table, a line per warning),
`--verbose` the full detail; `compare` keeps the modes side by side at 80 columns; md,
csv and json parse back on `run`, `compare` and `recommend` (bench: test_bench_outputs),
with the same numbers as the table; a bad `--format` or `-o FORMAT` is one line."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.app import main
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of
from tests.helpers.cli_model import use_fake_model
from tests.helpers.sweep_runs import make_sweep_run

MODES = ("none", "json", "gbnf")
ANSWER = '{"name": "x"}'


def _run(monkeypatch: pytest.MonkeyPatch, out: Path, *args: str) -> tuple[str, str]:
    """`edgebench run` of the built-in EdgeJSON task on the fake model, three modes:
    (stdout, stderr)."""
    backend = FakeBackend(default_output=ANSWER)
    use_fake_model(monkeypatch, lambda model, mode: InProcessWorker(backend))
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        pytest.raises(SystemExit) as exit_info,
    ):
        main(["run", "--constraint", ",".join(MODES), "--out", str(out), *args])
    assert not exit_info.value.code, stderr.getvalue()
    return stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def three_arms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """A 20-example three-mode run at 80 columns: (folder, stdout, stderr)."""
    out = tmp_path_factory.mktemp("three") / "run"
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("COLUMNS", "80")
        yield out, *_run(monkeypatch, out, "--limit", "20")


def md_tables(text: str) -> list[list[list[str]]]:
    """Every pipe table in `text`: its rows of cells as they read (Markdown's backslash
    escapes undone), the rule row checked and left out."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = line.strip().strip("|").split(" | ")
            current.append([re.sub(r"\\(.)", r"\1", cell.strip()) for cell in cells])
            continue
        if current:
            header, rule, *body = current
            assert set(rule) <= {"---", "---:"}, rule
            assert all(len(row) == len(header) for row in body), current
            tables.append([header, *body])
            current = []
    return tables


def test_a_three_arm_run_prints_one_screen(three_arms: tuple[Path, str, str]) -> None:
    out, shown, err = three_arms
    lines = shown.splitlines()
    assert len(lines) <= 25, shown
    assert max(len(line) for line in lines) <= 80 and "…" not in shown
    for mode in MODES:  # a row per arm in the scores table and in the speed table
        assert sum(line.split()[:1] == [mode] for line in lines) == 2, shown
    assert "[1.00, 1.00]" in shown  # valid JSON's interval under it
    assert "TTFT s" in shown and "decode tok/s" in shown and "peak RSS MiB" in shown
    assert "⚠ n < 50: indicative only: 20 examples scored" in shown
    assert "p50 95% CI" not in shown and "differences on the same examples" not in shown
    assert f"run folder: {out}" in " ".join(err.split())


def test_verbose_prints_every_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, three_arms: tuple[Path, str, str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    shown, _ = _run(monkeypatch, tmp_path / "run", "--limit", "20", "--verbose")
    for detail in ("p50 95% CI", "differences on the same examples", "tokens in/out", "overall"):
        assert detail in shown
    assert len(shown.splitlines()) > 2 * len(three_arms[1].splitlines())


def test_run_formats_parse_back_with_the_tables_numbers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    printed = {
        fmt: _run(monkeypatch, tmp_path / fmt, "--limit", "3", "--format", fmt)[0]
        for fmt in ("md", "csv", "json", "table")
    }
    scores, speed = md_tables(printed["md"])
    assert scores[0][:2] == ["constraint", "n"] and "valid" in scores[0]
    assert [row[0] for row in scores[1:]] == list(MODES)
    assert speed[0] == ["constraint", "TTFT s", "decode tok/s", "peak RSS MiB"]
    assert scores[1][scores[0].index("valid")] == "1.000 [1.00, 1.00]"
    rows = list(csv.DictReader(io.StringIO(printed["csv"])))
    assert [row["constraint"] for row in rows] == list(MODES)
    assert rows[0]["valid"] == "1.000" and rows[0]["valid 95% CI"] == "[1.00, 1.00]"
    for row, md_row in zip(rows, speed[1:], strict=True):  # the same (virtual) timings
        assert f"{row['TTFT s']} {row['TTFT s 95% CI']}" == md_row[1]
        assert row["peak RSS MiB"].isdigit() and md_row[3].isdigit()  # measured: not equal
    arms = json.loads(printed["json"])["arms"]
    assert [arm["constraint"] for arm in arms] == list(MODES)
    assert "1.000" in printed["table"] and "|" not in printed["table"]


@pytest.mark.parametrize("width", [80, 120])
def test_compare_keeps_the_modes_side_by_side(
    three_arms: tuple[Path, str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    width: int,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    shown = stdout_of(capsys, "compare", str(three_arms[0]))
    lines = shown.splitlines()
    assert max(len(line) for line in lines) <= width and "…" not in shown
    # the one runtime in the title; the engine beside each mode, but at 80 columns
    labels = ["constraint", "n"] if width == 80 else ["constraint", "engine", "n"]
    assert "runtime fake" in " ".join(shown.split())
    (header,) = [line for line in lines if line.split()[: len(labels)] == labels]
    assert "valid" in header and "tok/s" in header
    for mode in MODES:  # one row per mode, its figures on its line
        (row,) = [line for line in lines if line.split()[:1] == [mode]]
        engine = [] if width == 80 else ["-" if mode == "none" else "fake"]
        assert row.split()[1 : len(labels) + 1] == [*engine, "20", "1.000"], row
    # the legend: short left-aligned lines under the table, not a centred paragraph
    first = "n: examples scored" if width == 80 else "engine: what enforced"
    legend = next(line for line in lines if line.startswith(first))
    assert "tok/s: decode tokens/s" in shown and not legend.startswith(" ")
    if width == 80:
        assert "not shown at this width:" in " ".join(shown.split())
        assert ", engine" in " ".join(shown.split())


def test_compare_formats_parse_back(
    three_arms: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(three_arms[0])
    table, *_ = md_tables(stdout_of(capsys, "compare", run, "--format", "md"))
    assert table[0][:3] == ["runtime", "constraint", "engine"]
    assert "RSS MiB" in table[0] and "wall s" in table[0]
    assert [row[1] for row in table[1:]] == list(MODES)
    rows = list(csv.DictReader(io.StringIO(stdout_of(capsys, "compare", run, "--format", "csv"))))
    assert [row["constraint"] for row in rows] == list(MODES)
    for row, md_row in zip(rows, table[1:], strict=True):
        assert f"{row['valid']} {row['valid 95% CI']}" == md_row[table[0].index("valid")]
    as_format = json.loads(stdout_of(capsys, "compare", run, "--format", "json"))
    assert as_format == json.loads(stdout_of(capsys, "compare", run, "--json"))
    assert [row["constraint"] for row in as_format] == list(MODES)


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep_run(tmp_path_factory.mktemp("formats") / "sweep")


def test_recommend_formats_parse_back(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("recommend", str(sweep_dir), "--max-memory", "235MiB", "--arm", "mask")
    printed = stdout_of(capsys, *args, "--format", "md")
    sweep, devices = md_tables(printed)
    assert (
        sweep[0][:5] == ["variant", "quant", "runtime", "mode", "engine"]
        and devices[0][0] == "variant · mode"
    )
    assert "✓ smollm2-135m-instruct@Q4\\_K\\_M · mask: on the front" in printed
    rows = list(csv.DictReader(io.StringIO(stdout_of(capsys, *args, "--format", "csv"))))
    assert [row["variant"] for row in rows] == [row[0] for row in sweep[1:]]
    assert json.loads(stdout_of(capsys, *args, "--format", "json")) == json.loads(
        stdout_of(capsys, *args, "--json")
    )


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--format", "xml"),
        ("run", "--json", "--format", "md"),
        ("compare", "RUN", "--format", "html"),
        ("recommend", "RUN", "--format", "MD"),
    ],
)
def test_a_bad_format_is_one_line(
    three_arms: tuple[Path, str, str], capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    given = [str(three_arms[0]) if arg == "RUN" else arg for arg in args]
    code, err = run_cli(capsys, *given)
    assert_one_line_error(code, err, "--format")
    if "--json" not in args:
        assert "table, md, csv, json" in err


@pytest.mark.parametrize("command", ["run", "bench"])
@pytest.mark.parametrize("name", ["md", "csv", "json", "table"])
def test_out_named_like_a_format_is_refused(
    capsys: pytest.CaptureFixture[str], command: str, name: str
) -> None:
    code, err = run_cli(capsys, command, "-o", name)
    assert_one_line_error(code, err, f"--out {name}", f"--format {name}", f"./{name}")
    assert not Path(name).exists()
