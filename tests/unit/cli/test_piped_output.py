"""Output that is not a terminal (a pipe, a log file) keeps every number: `run` and
`compare` render their tables at full width, whatever an 80-column default would cut, and
respect `COLUMNS` when the user sets it. Captured by pytest, stdout is not a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.report.compact import render_compact
from edgebench.report.compare import compare_table
from edgebench.summary import load_run
from tests.helpers.cli import stdout_of
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.tables import assert_whole, tables_in

# Long labels and two models, two modes: the side-by-side table is far over 160 columns.
MODELS = ("a-model-with-a-rather-long-name-q4_k_m", "another-model-whose-name-is-long-q8_0")


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    monkeypatch.delenv("COLUMNS", raising=False)
    return roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}, {"b": [2, 3]}, {"c": "x"}])


def two_model_run(cli: RoundtripCli, capsys: pytest.CaptureFixture[str]) -> str:
    """The run's stdout."""
    cli.answer_with(FakeBackend(echo=True))
    models = [arg for name in MODELS for arg in ("--model", name)]
    return stdout_of(
        capsys,
        "run",
        "--task",
        "roundtrip",
        "--dataset",
        str(cli.payloads),
        "--out",
        str(cli.out),
        "--constraint",
        "none,json",
        *models,
    )


def test_piped_compare_keeps_every_column_and_number(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str]
) -> None:
    two_model_run(cli, capsys)
    shown = stdout_of(capsys, "compare", str(cli.out))
    table = compare_table([load_run(cli.out).summary])
    assert_whole(table, shown)
    assert max(len(line) for line in shown.splitlines()) > 160  # once cut at 160


def test_piped_run_keeps_every_table_whole(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = two_model_run(cli, capsys)
    tables = tables_in(render_compact(load_run(cli.out).summary))
    assert tables
    for table in tables:
        assert_whole(table, shown)
    for name in MODELS:
        assert name in shown


def test_piped_output_respects_columns_when_set(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    two_model_run(cli, capsys)
    monkeypatch.setenv("COLUMNS", "120")
    shown = stdout_of(capsys, "compare", str(cli.out))
    assert max(len(line) for line in shown.splitlines()) <= 120
