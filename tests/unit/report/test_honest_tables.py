"""Tables say what their rates are over: `n` is the examples scored, with the skipped ones
and the dataset's invalid rows beside it; a group whose examples were all skipped shows no
value (an em dash; null in summary.json), never 0.0. The run's final table, `compare`, the
card and the report alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from edgebench.analysis.rundata import arms
from edgebench.report.card import write_card
from edgebench.report.compare import compare_rows, compare_table
from edgebench.report.html import group_tables, leaderboard, render_report
from edgebench.report.table import render_summary
from edgebench.runner.engine import RunResult
from edgebench.summary import load_run
from tests.helpers.fakes import RIGHT, WRONG, example
from tests.helpers.run_fake import RunFake

LONG = " ".join(["pad"] * 600)  # far over --max-context 512: never decoded
NO_VALUE = "—"


@pytest.fixture
def skipped_run(run_fake: RunFake) -> RunResult:
    """Four examples: the two `complex` ones too long for the context (skipped), the two
    `simple` ones answered right, then wrong."""
    exs = [example(i, text=LONG if i % 2 == 0 else None) for i in range(4)]
    return run_fake([RIGHT, WRONG], examples=exs, max_context=512, max_tokens=64)


def _shown(renderable: object) -> str:
    console = Console(width=250, record=True)
    console.print(renderable)
    return console.export_text()


def _row(text: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is `first`."""
    for line in text.splitlines():
        bars = line.replace("┃", "|").replace("│", "|").strip().strip("|")
        cells = [c.strip() for c in bars.split("|")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n{text}")


def test_summary_json_has_null_for_a_group_with_nothing_scored(skipped_run: RunResult) -> None:
    summary = json.loads((skipped_run.run_dir / "summary.json").read_text())
    family = summary["arms"][0]["families"]["edgejson"]
    assert family["overall"]["n"] == 2 and family["overall"]["n_skipped"] == 2
    assert family["overall"]["json_exact"] == 0.5
    complex_row = family["groups"]["complexity"]["complex"]
    assert complex_row["n"] == 0 and complex_row["n_skipped"] == 2
    assert complex_row["json_exact"] is None and complex_row["schema_compliance"] is None
    assert summary["n_invalid_data"] == 0 and summary["prompt_style"] == "default"


def test_the_final_table_shows_n_scored_with_the_skipped_beside_it(
    skipped_run: RunResult,
) -> None:
    shown = _shown(render_summary(skipped_run.summary))
    assert "2 scored · 2 skipped · 0 invalid data" in shown
    header = _row(shown, "complexity")
    assert header[1:4] == ["n", "skipped", "JSONExact"]
    assert _row(shown, "complex")[1:4] == ["0", "2", NO_VALUE]
    assert _row(shown, "simple")[1:4] == ["2", "0", "0.500"]
    assert _row(shown, "overall")[1:4] == ["2", "2", "0.500"]
    assert "0.000" not in shown.split("performance")[0]


def test_compare_shows_n_scored_skipped_and_invalid(skipped_run: RunResult) -> None:
    summary = skipped_run.summary
    (row,) = compare_rows([summary])
    assert (row["n"], row["n_skipped"], row["n_invalid_data"]) == (2, 2, 0)
    shown = _shown(compare_table([summary]))
    assert _row(shown, "runtime")[1:6] == ["constraint", "engine", "n", "skipped", "invalid"]
    assert _row(shown, "fake")[1:6] == ["none", "-", "2", "2", "0"]


def test_the_card_shows_n_scored_and_no_value_for_an_all_skipped_group(
    skipped_run: RunResult, tmp_path: Path
) -> None:
    card = tmp_path / "card.md"
    write_card(load_run(skipped_run.run_dir), card, examples=1)
    text = card.read_text().split("\n## Accuracy\n", 1)[1]  # every accuracy figure
    assert _row(text, "constraint")[1:4] == ["n", "skipped", "invalid data"]
    assert _row(text, "none")[1:5] == ["2", "2", "0", "0.500 \\[0.00, 1.00\\]"]
    assert _row(text, "complexity")[2:5] == ["n", "skipped", "JSONExact"]
    assert _row(text, "complex")[2:5] == ["0", "2", NO_VALUE]


def test_the_report_shows_n_scored_and_no_value_for_an_all_skipped_group(
    skipped_run: RunResult,
) -> None:
    run = load_run(skipped_run.run_dir)
    board = leaderboard(arms(run))
    keys = [c.key for c in board["columns"]]
    labels = {c.key: c.label for c in board["columns"]}
    assert [labels[k] for k in ("n", "n_skipped", "n_invalid_data")] == [
        "n",
        "skipped",
        "invalid data",
    ]
    row = board["rows"][0]
    cells = [row[keys.index(k)] for k in ("n", "n_skipped", "n_invalid_data", "metric:json_exact")]
    assert [cell.text for cell in cells] == ["2", "2", "0", "0.500"]
    assert cells[-1].note == "[0.00, 1.00]"  # the rate, then its 95% interval under it
    (by_complexity,) = [t for t in group_tables(arms(run)) if t["name"] == "complexity"]
    complex_row = next(r for r in by_complexity["rows"] if r[0].text == "complex")
    assert [cell.text for cell in complex_row[2:5]] == ["0", "2", NO_VALUE]
    page = render_report([run])
    assert '<td class="num" data-value="">—</td>' in page
