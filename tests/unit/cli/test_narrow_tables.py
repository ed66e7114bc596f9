"""Tables at 80 columns (a Pi over SSH) and at a wide width: `models list`, `compare` and
`run` show every model name and every number whole, no line over the width, never "…"
(rich alone squeezes columns until names and numbers are cut). COLUMNS sets the width
of the captured (not a terminal) output, as it does a terminal's."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.models.registry import load_registry
from edgebench.report.compact import render_compact
from edgebench.report.compare import compare_table, differences_table
from edgebench.report.table import render_consistency, render_summary
from edgebench.summary import load_run
from tests.helpers.cli import stdout_of
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.tables import assert_whole, tables_in

MODELS = ("a-model-with-a-rather-long-name-q4_k_m", "another-model-whose-name-is-long-q8_0")
WIDTHS = (80, 200)


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    return roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}, {"b": [2, 3]}, {"c": "x"}])


@pytest.fixture(params=WIDTHS)
def width(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The output's width, set with COLUMNS."""
    monkeypatch.setenv("COLUMNS", str(request.param))
    return int(request.param)


def assert_fits(shown: str, width: int) -> None:
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines()) <= width, shown


def two_model_run(cli: RoundtripCli, capsys: pytest.CaptureFixture[str]) -> str:
    cli.answer_with(FakeBackend(echo=True))
    models = [arg for name in MODELS for arg in ("--model", name)]
    task = ("--task", "roundtrip", "--dataset", str(cli.payloads), "--out", str(cli.out))
    return stdout_of(capsys, "run", *task, "--constraint", "none,json", *models)


def test_run_tables_keep_names_and_numbers(
    cli: RoundtripCli,
    capsys: pytest.CaptureFixture[str],
    width: int,
) -> None:
    shown = two_model_run(cli, capsys)
    assert_fits(shown, width)
    for table in tables_in(render_compact(load_run(cli.out).summary)):
        assert_whole(table, shown, label_headers=width > 80)
    verbose = stdout_of(capsys, "run", "--resume", str(cli.out), "--verbose")
    assert_fits(verbose, width)
    for table in tables_in(render_summary(load_run(cli.out).summary)):
        assert_whole(table, verbose, label_headers=width > 80)


def test_compare_keeps_names_and_numbers(
    cli: RoundtripCli,
    capsys: pytest.CaptureFixture[str],
    width: int,
) -> None:
    two_model_run(cli, capsys)
    shown = stdout_of(capsys, "compare", str(cli.out))
    assert_fits(shown, width)
    summaries = [load_run(cli.out).summary]
    # At 80 columns compare leaves out the columns it can spare, and says which.
    wide = [compare_table(summaries)] if width > 80 else []
    if not wide:
        assert "not shown at this width: " in shown
    for table in (*wide, differences_table(summaries)):
        assert table is not None
        assert_whole(table, shown, label_headers=width > 80)
    for name in MODELS:
        assert name in shown


def test_models_list_keeps_every_name(capsys: pytest.CaptureFixture[str], width: int) -> None:
    shown = stdout_of(capsys, "models", "list")
    assert_fits(shown, width)
    for name, entry in load_registry().items():
        assert name in shown  # the one column a user must copy
        assert f"{entry.size_bytes / 1e6:.1f}" in shown
        assert entry.quantization in shown and entry.license in shown


def test_consistency_tables_keep_every_number(
    cli: RoundtripCli,
    capsys: pytest.CaptureFixture[str],
    width: int,
) -> None:
    cli.answer_with(FakeBackend(sampled=['{"a": 1}', '{"a": 2}', "no json"]))
    task = ("--task", "roundtrip", "--dataset", str(cli.payloads), "--out", str(cli.out))
    plan = ("--samples", "3", "--temperatures", "0.2,0.7", "--model", MODELS[0])
    shown = stdout_of(capsys, "consistency", *task, *plan)
    assert_fits(shown, width)
    for table in tables_in(render_consistency(load_run(cli.out).summary)):
        assert_whole(table, shown, label_headers=width > 80)
    assert MODELS[0] in shown
