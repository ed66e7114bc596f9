"""The report's leaderboard at first sight: unique row labels from the folder names, the
first screen (the row, the task's headline scores with intervals, the cost) shown, every
other column hidden behind the column chooser, and each extra metric family in a table
of its own."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from edgebench.analysis.figures import headline_scores
from edgebench.analysis.rundata import run_labels
from edgebench.report.facts import device_summary
from edgebench.report.html import render_report
from edgebench.summary import LoadedRun, load_run
from edgebench.system.records import Device
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.pages import Page, leaderboard_rows
from tests.helpers.report_runs import make_run

FIRST_SCREEN = [
    "run",
    "device",
    "model",
    "quant",
    "runtime",
    "constraint",
    "engine",
    "n",
    "metric:json_exact",
    "metric:field_f1",
    "metric:schema_compliance",
    "perf.ttft_s.p50",
    "perf.decode_tok_s.p50",
    "perf.latency_s.p50",
    "perf.peak_rss_mb",
]
BEHIND_THE_CHOOSER = [
    "n_skipped",
    "n_invalid_data",
    "metric:field_precision",
    "metric:field_recall",
    "metric:valid_json",
    "perf.prefill_tok_s.p50",
    "decode_ratio_to_none",
    "perf.decode_tok_s.p95",
    "perf.latency_s.p95",
    "perf.load_s",
    "perf.closed",
    "perf.wall_s",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[LoadedRun]:
    """A run with an extra metric family, and a copy of it in another folder of the same
    name (the copy keeps the recorded run id `two`)."""
    base = tmp_path_factory.mktemp("leaderboard")
    with chat_templates_in_process():
        first = make_run(base / "laptop" / "two", modes="none,mask", metrics=("structure",))
    copy = base / "copy" / "two"
    shutil.copytree(first, copy)
    return [load_run(first), load_run(copy)]


@pytest.fixture(scope="module")
def page(runs: list[LoadedRun]) -> str:
    return render_report(runs)


def _board(page: str) -> str:
    return page.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]


@pytest.mark.parametrize(
    ("folders", "labels"),
    [
        (["runs/a", "runs/b"], ["a", "b"]),
        # A run and its copy elsewhere: the parent folder tells them apart.
        (["laptop/two", "copy/two"], ["laptop/two", "copy/two"]),
        # As many parents as it takes, and only for the names that clash.
        (["x/n/two", "y/n/two", "one"], ["x/n/two", "y/n/two", "one"]),
        # The same folder twice (also as another spelling of its path): a count.
        (["two", "./two", "other/two"], ["runs/two", "runs/two (2)", "other/two"]),
    ],
)
def test_run_labels_are_the_folder_names_made_unique(
    folders: list[str], labels: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path / "runs")
    paths = [Path(f) for f in folders]
    assert run_labels(paths) == labels
    assert run_labels(paths) == labels  # the same every time
    assert len(set(run_labels(paths))) == len(paths)


def test_two_copies_of_one_run_get_two_labels(page: str, runs: list[LoadedRun]) -> None:
    assert runs[0].run_id == runs[1].run_id == "two"  # what the rows were labelled before
    rows = leaderboard_rows(page)
    assert [row["run"][0] for row in rows] == ["laptop/two"] * 2 + ["copy/two"] * 2
    # Each run's own section carries the row's label.
    assert "<h2>Run laptop/two</h2>" in page and "<h2>Run copy/two</h2>" in page


def test_the_first_screen_holds_the_row_its_headline_scores_and_its_cost(page: str) -> None:
    board = _board(page)
    shown = re.findall(r'<th data-key="([^"]*)" scope="col">', board)
    hidden = re.findall(r'<th data-key="([^"]*)" scope="col" hidden>', board)
    assert shown == FIRST_SCREEN
    assert hidden == BEHIND_THE_CHOOSER
    headers = dict(re.findall(r'<th data-key="([^"]*)"[^>]*>([^<]*)</th>', board))
    assert [headers[k] for k in FIRST_SCREEN[3:8]] == ["quant", "runtime", "mode", "engine", "n"]
    row = leaderboard_rows(page)[1]  # mask: a rate with its 95% interval under it
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d\d, \d\.\d\d\]", row["metric:field_f1"][0])
    assert row["quant"][0] == "Q4_1" and row["constraint"][0] == "mask"
    # Hidden cells are in every row, so a column the chooser shows is complete.
    for body_row in re.findall(r'<tr class="leaderboard-row">(.*?)</tr>', board, re.S):
        assert body_row.count(" hidden>") == len(BEHIND_THE_CHOOSER)


def test_the_column_chooser_offers_every_hidden_column(page: str) -> None:
    chooser = page.split('id="column-chooser"', 1)[1].split("</details>", 1)[0]
    assert f"More columns ({len(BEHIND_THE_CHOOSER)})" in chooser
    boxes = [
        attrs["data-key"]
        for tag, attrs in Page(chooser).tags
        if tag == "input" and attrs.get("type") == "checkbox"
    ]
    assert boxes == BEHIND_THE_CHOOSER


def test_an_extra_metric_family_has_a_table_of_its_own(page: str) -> None:
    # Not in the leaderboard ...
    assert "metric:structure." not in _board(page)
    # ... but in its own table, every arm of every run, each figure with its interval.
    table = page.split('data-family="structure"', 1)[1].split("</table>", 1)[0]
    assert "<h2>Metric family · structure</h2>" in page
    keys = re.findall(r'<th data-key="([^"]*)"', table)
    assert keys == [
        "run",
        "model",
        "constraint",
        "n",
        "metric:csa",
        "metric:nted",
        "metric:valid_json",
    ]
    rows = re.findall(r"<tr><td", table)
    assert len(rows) == 4
    assert table.count('class="ci"') == 4 * 3


@pytest.mark.parametrize(
    ("device", "label"),
    [
        (
            Device(cpu_model="AMD EPYC", ram_total_mb=24106, hypervisor=True, threads_used=2),
            "AMD EPYC · 24\u00a0GB · VM · 2\u00a0threads",
        ),
        (
            Device(
                board_model="Raspberry Pi 5 Model B Rev 1.0",
                cpu_model="Cortex-A76",
                ram_total_mb=8064,
            ),
            "Raspberry Pi 5 Model B Rev 1.0 (Cortex-A76) · 7.9\u00a0GB",
        ),
        (Device(machine="aarch64", hypervisor=False), "aarch64"),
        (Device(), "unknown CPU"),
    ],
)
def test_the_device_cell_names_cpu_ram_and_a_vm(device: Device, label: str) -> None:
    assert device_summary(device) == label


@pytest.mark.parametrize(
    ("names", "headline"),
    [
        (
            ["json_exact", "field_f1", "field_precision", "field_recall", "schema_compliance"],
            ["json_exact", "field_f1", "schema_compliance"],
        ),
        (["syntax", "key_matching", "strict", "valid_json"], ["syntax", "key_matching", "strict"]),
        (["schema_compliance", "valid_json"], ["schema_compliance", "valid_json"]),
    ],
)
def test_headline_scores_are_the_tasks_first_figures(names: list[str], headline: list[str]) -> None:
    assert headline_scores(names) == headline
