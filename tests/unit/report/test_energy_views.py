"""Energy and throttling in compare, the card and the HTML report: the figures when a
power source measured them, one line saying why when none did, the timeline plot when
the timeline read something."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.analysis.rundata import arms, load_run
from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.report.card import render_card
from edgebench.report.compare import compare_rows, compare_table
from edgebench.report.html import render_report
from edgebench.report.plots import drawn_plots
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.power import FakePower
from tests.helpers.run_fake import RunFake

HOT = {"temp_c": 71.5, "temp_source": "fake", "freq_mhz": [1500, 2400], "throttled": None}


@pytest.fixture
def measured(run_fake: RunFake, tmp_path: Path) -> Path:
    # answers of ~5 ms of virtual time that take 20 ms of real time: inside the readings
    timings = FakeTimings(per_prompt_token=0.0001, per_output_token=0.0005)
    result = run_fake(
        FakeBackend([RIGHT, WRONG, RIGHT], timings=timings, delay_s=0.02),
        power=FakePower(lambda t: 5.0).choice(),
        timeline_interval=0.02,
        idle_baseline=0.0,
        heat=lambda: dict(HOT),
        out=tmp_path / "measured",
    )
    return result.run_dir


@pytest.fixture
def unmeasured(run_fake: RunFake, tmp_path: Path) -> Path:
    return run_fake([RIGHT] * 3, out=tmp_path / "unmeasured").run_dir


def test_compare_shows_energy_columns_only_when_measured(measured: Path, unmeasured: Path) -> None:
    table = compare_table([load_run(measured).summary])
    headers = [str(column.header) for column in table.columns]
    assert {"J/prefill tok", "J/decode tok", "J/answer", "J/compliant", "J/exact"} <= set(headers)
    assert "energy: fake-meter (external; exact readings of a test's function)" in str(
        table.caption
    )
    table = compare_table([load_run(unmeasured).summary])
    assert not any("J/" in str(column.header) for column in table.columns)
    assert "energy: not measured (no power source in tests)" in str(table.caption)


def test_compare_json_rows_carry_the_reason(unmeasured: Path) -> None:
    (row,) = compare_rows([load_run(unmeasured).summary])
    assert row["energy.total_j"] is None
    assert row["energy_reason"] == "no power source in tests"
    assert row["throttled_during_run"] is None


def test_the_card_has_an_energy_table_or_the_line_saying_why(
    measured: Path, unmeasured: Path
) -> None:
    card = render_card(load_run(measured), None, [])
    section = card.split("## Energy and heat", 1)[1].split("\n## ", 1)[0]
    assert (
        "| J/prefill tok | J/decode tok | J/answer | J/compliant | J/exact | total J |" in section
    )
    assert "joules_per_answer" in card  # in the model-index too
    card = render_card(load_run(unmeasured), None, [])
    section = card.split("## Energy and heat", 1)[1].split("\n## ", 1)[0]
    assert section.strip() == "energy: not measured (no power source in tests)"
    assert "joules_per_answer" not in card


def test_the_report_lists_energy_columns_and_the_reason(measured: Path, unmeasured: Path) -> None:
    page = render_report([load_run(measured), load_run(unmeasured)])
    assert 'data-key="energy.j_per_exact_answer"' in page
    assert "energy: not measured" not in page  # one run was measured: its figures show
    page = render_report([load_run(unmeasured)])
    assert 'data-key="energy.j_per_exact_answer"' not in page
    assert "energy: not measured (no power source in tests)" in page


def test_the_timeline_plot_needs_something_read(measured: Path, unmeasured: Path) -> None:
    names = [d.name for d in drawn_plots(arms(load_run(measured)))]
    assert "timeline" in names
    plot = next(d for d in drawn_plots(arms(load_run(measured))) if d.name == "timeline")
    labels = [ax.get_ylabel() for ax in plot.figure.axes]
    assert labels == ["decode tok/s", "CPU °C", "CPU MHz", "watts"]
    assert plot.figure.axes[-1].get_xlabel() == "seconds since the run's first timeline row"
    # nothing readable (this fixture's machine has no sensor): no timeline plot
    assert "timeline" not in [d.name for d in drawn_plots(arms(load_run(unmeasured)))]


def test_summary_json_has_the_energy_block(measured: Path) -> None:
    summary = json.loads((measured / "summary.json").read_text())
    energy = summary["arms"][0]["energy"]
    assert set(energy) >= {
        "source",
        "tier",
        "resolution",
        "idle_watts",
        "idle_seconds",
        "j_per_prefill_token",
        "j_per_decode_token",
        "j_per_answer",
        "j_per_compliant_answer",
        "j_per_exact_answer",
        "total_j",
        "reason",
    }
    assert energy["idle_watts"] is None and energy["total_j"] > 0  # --idle-baseline 0
