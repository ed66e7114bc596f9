"""The report's device axis: runs of three devices (two units of one Raspberry Pi 5
model, a laptop) give a leaderboard per device ranked on the primary metric, a device x
(model, mode) matrix grouped by model of device with "—" where a device did not run a
mode, the spread between the two Pi units, a device column in `compare`, and the device
in the card. Runs of one device show no devices section."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from edgebench.analysis.rundata import arms
from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.report.card import write_card
from edgebench.report.compare import compare_rows, compare_table
from edgebench.report.html import render_report
from edgebench.runfolder.identity import identity_of
from edgebench.summary import LoadedRun, load_run
from edgebench.system.records import Device
from tests.helpers.device_runs import LAPTOP, PI5, Fleet, identity, make_fleet
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.pages import leaderboard_rows, table_cells
from tests.helpers.power import FakePower
from tests.helpers.report_runs import SCRIPT
from tests.helpers.run_fake import RunFake


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    with chat_templates_in_process():
        return make_fleet(tmp_path_factory.mktemp("fleet"))


@pytest.fixture(scope="module")
def runs(fleet: Fleet) -> list[LoadedRun]:
    return [load_run(path) for path in (fleet.laptop, fleet.pi_a, fleet.pi_b)]


@pytest.fixture(scope="module")
def page(runs: list[LoadedRun]) -> str:
    return render_report(runs)


def test_a_leaderboard_per_device_ranked_on_the_primary_metric(page: str) -> None:
    headers, rows = table_cells(page, 'data-device="pi5-b · ubbbb0000"')
    assert headers == [
        "#",
        "run",
        "model",
        "quant",
        "runtime",
        "mode",
        "engine",
        "n",
        "Field F1",
        "decode tok/s p50",
        "TTFT p50 (s)",
        "peak RSS (MiB)",
    ]
    # Equal F1 (2 of 3 right in both modes): the faster mode first; 25% slower than pi5-a.
    assert [(r[0], r[5], r[6], r[8].split()[0], r[9]) for r in rows] == [
        ("1", "mask", "llguidance", "0.667", "160.0 [160.0, 160.0]"),  # p50 over its 95% interval
        ("2", "none", "-", "0.667", "80.0 [80.0, 80.0]"),
    ]
    assert page.index('data-device="laptop') < page.index('data-device="pi5-a')


def test_the_matrix_has_a_row_per_device_under_its_model_of_device(page: str) -> None:
    headers, rows = table_cells(page, 'id="device-matrix"')
    assert headers == ["device", "smollm2 · none", "smollm2 · mask"]
    assert rows == [
        [LAPTOP],
        ["laptop · ucccc0000", "0.333 200.0 tok/s", "—"],  # never ran mask: —, not 0
        [PI5],
        ["pi5-a · uaaaa0000", "1.000 100.0 tok/s", "1.000 200.0 tok/s"],
        ["pi5-b · ubbbb0000", "0.667 80.0 tok/s", "0.667 160.0 tok/s"],
    ]
    missing = page.split('id="device-matrix"', 1)[1].split("laptop · ucccc0000", 1)[1]
    assert '<td class="num" data-value="">—' in missing.split("</tr>", 1)[0]


def test_the_spread_between_units_of_one_model_of_device(page: str) -> None:
    headers, rows = table_cells(page, 'id="device-spread"')
    assert headers[:5] == [
        "model of device",
        "model · mode",
        "units",
        "decode tok/s p50",
        "decode spread %",
    ]
    # 80 and 100 tok/s: (100 - 80) / 90 = 22.2%; F1 0.667 and 1: 0.333 / 0.833 = 40%.
    assert rows == [
        [PI5, "smollm2 · none", "2", "80.0–100.0", "22.2", "0.667–1.000", "40.0"],
        [PI5, "smollm2 · mask", "2", "160.0–200.0", "22.2", "0.667–1.000", "40.0"],
    ]


def test_the_leaderboard_names_each_rows_device(page: str) -> None:
    devices = [row["device"][0] for row in leaderboard_rows(page)]
    assert [d.split(" · ")[:2] for d in devices] == [
        ["laptop", "ucccc0000"],
        ["pi5-a", "uaaaa0000"],
        ["pi5-a", "uaaaa0000"],
        ["pi5-b", "ubbbb0000"],
        ["pi5-b", "ubbbb0000"],
    ]


def test_one_device_has_no_devices_section(
    fleet: Fleet, runs: list[LoadedRun], tmp_path: Path
) -> None:
    page = render_report(runs[1:2])
    assert 'id="devices"' not in page and "Leaderboard per device" not in page
    again = tmp_path / "again" / "run"  # two runs of one device: still one device
    shutil.copytree(fleet.pi_a, again)
    assert 'id="devices"' not in render_report([runs[1], load_run(again)])
    # and its leaderboard's device cell is the hardware alone, as before
    assert leaderboard_rows(page)[0]["device"][0].startswith("Raspberry Pi 5")


def test_units_of_one_kind_without_the_other_kind_still_show_their_spread(
    runs: list[LoadedRun],
) -> None:
    page = render_report(runs[1:])
    _, rows = table_cells(page, 'id="device-matrix"')
    assert rows[0] == [PI5] and len(rows) == 3
    assert 'id="device-spread"' in page


def test_a_device_alone_of_its_kind_has_no_spread(runs: list[LoadedRun]) -> None:
    page = render_report(runs[:2])  # the laptop and one Pi
    assert 'id="devices"' in page and 'id="device-spread"' not in page


def test_runs_before_format_2_8_group_by_their_derived_identity(
    runs: list[LoadedRun], tmp_path: Path
) -> None:
    """No identity recorded: the device facts make one (unit unknown), so two old runs of
    different machines are still two devices."""
    old = [
        _with_device(run, {"cpu_model": cpu, "ram_total_mb": 8048})
        for run, cpu in zip(runs[1:], ("Cortex-A76", "Cortex-A72"), strict=True)
    ]
    _, rows = table_cells(render_report(old), 'id="device-matrix"')
    assert [row[0] for row in rows] == [
        "Cortex-A72 · 8 GB",
        "Cortex-A72 · 8 GB · unit unknown",
        "Cortex-A76 · 8 GB",
        "Cortex-A76 · 8 GB · unit unknown",
    ]


def _with_device(run: LoadedRun, device: dict[str, object]) -> LoadedRun:
    """The run as if measured on `device` (its manifest's device block replaced)."""
    return replace(run, manifest=replace(run.manifest, device=Device.from_json(device)))


def test_compare_gets_a_device_column_over_several_devices(runs: list[LoadedRun]) -> None:
    summaries = [run.summary for run in runs]
    devices = [run.manifest.device for run in runs]
    rows = compare_rows(summaries, devices=devices)
    assert [(r["device"], r["constraint"]) for r in rows] == [
        ("laptop", "none"),
        ("pi5-a", "none"),
        ("pi5-a", "mask"),
        ("pi5-b", "none"),
        ("pi5-b", "mask"),
    ]
    assert rows[0]["device_fingerprint"] == "d7777cccc0000"
    json.dumps(rows)  # plain JSON
    table = compare_table(summaries, devices=devices)
    assert [c.header for c in table.columns][:2] == ["run", "device"]
    # named with the short fingerprint (identity's device_tag), as the title names one
    assert [c.split(" · ")[0] for c in table.columns[1]._cells] == [
        "laptop",
        "pi5-a",
        "pi5-a",
        "pi5-b",
        "pi5-b",
    ]
    assert table.columns[1]._cells[0] == "laptop · d7777ccc"
    one = compare_table(summaries[1:2], devices=devices[1:2])  # one device: no column
    assert "device" not in [c.header for c in one.columns]


def test_two_devices_of_one_name_are_told_apart_by_unit(runs: list[LoadedRun]) -> None:
    twin = runs[2].manifest.device
    assert twin.identity is not None
    renamed = Device.from_json(
        {**twin.to_json(), "identity": {**twin.identity.to_json(), "name": "pi5-a"}}
    )
    rows = compare_rows(
        [runs[1].summary, runs[2].summary], devices=[runs[1].manifest.device, renamed]
    )
    # one name, two units: the JSON rows keep them apart by fingerprint
    assert {r["device"] for r in rows} == {"pi5-a"}
    assert len({r["device_fingerprint"] for r in rows}) == 2


def test_every_arm_of_every_device_is_in_its_leaderboard(runs: list[LoadedRun], page: str) -> None:
    total = sum(len(arms(run)) for run in runs)
    boards = page.split("Leaderboard per device", 1)[1].split("</section>", 1)[0]
    assert boards.count("<tr>") - boards.count("<thead><tr>") == total
    assert boards.count('class="sortable device-leaderboard"') == 3


def test_a_hostile_device_name_is_shown_as_text(tmp_path: Path) -> None:
    with chat_templates_in_process():
        fleet = make_fleet(tmp_path, laptop_name=SCRIPT)
    page = render_report([load_run(fleet.laptop), load_run(fleet.pi_a)])
    assert SCRIPT not in page
    _, rows = table_cells(page, 'id="device-matrix"')
    assert rows[1][0] == f"{SCRIPT} · ucccc0000"


def test_the_card_names_the_device_it_measured(fleet: Fleet, tmp_path: Path) -> None:
    card = write_card(load_run(fleet.pi_b), tmp_path / "card.md", examples=0).card.read_text()
    device = card.split("## Device", 1)[1].split("\n## ", 1)[0]
    assert "| device | pi5-b · d5555bbb |" in device
    assert f"| model of device | {PI5} |" in device
    assert "| fingerprint | d5555bbbb0000 |" in device
    assert "device_name: pi5-b" in card and "device_fingerprint: d5555bbbb0000" in card


def test_a_device_leaderboard_shows_energy_when_some_arm_was_measured(
    run_fake: RunFake, tmp_path: Path
) -> None:
    timings = FakeTimings(per_prompt_token=0.0001, per_output_token=0.0005)
    measured = run_fake(
        FakeBackend([RIGHT, WRONG, RIGHT], timings=timings, delay_s=0.02),
        power=FakePower(lambda t: 5.0).choice(),
        idle_baseline=0.0,
        out=tmp_path / "measured",
    ).run_dir
    unmeasured = run_fake([RIGHT] * 3, out=tmp_path / "unmeasured").run_dir
    pi = identity("pi5-a", "aaaa", "5555", PI5)
    laptop = identity("laptop", "cccc", "7777", LAPTOP)
    runs = [
        _with_device(load_run(measured), {"identity": pi}),
        _with_device(load_run(unmeasured), {"identity": laptop}),
    ]
    page = render_report(runs)
    headers, rows = table_cells(page, 'data-device="pi5-a · uaaaa0000"')
    assert headers[-2:] == ["J/answer", "J/decode tok"]
    assert rows[0][-2] != "—"  # measured
    _, rows = table_cells(page, 'data-device="laptop · ucccc0000"')
    assert rows[0][-2:] == ["—", "—"]  # not measured: —, never 0


def test_identity_of_keeps_the_recorded_identity_and_derives_one_for_old_runs(
    runs: list[LoadedRun],
) -> None:
    recorded = runs[1].manifest.device
    assert identity_of(recorded) == recorded.identity
    old = Device.from_json({"cpu_model": "Cortex-A76", "ram_total_mb": 8048})
    derived = identity_of(old)
    assert derived == identity_of(Device.from_json(old.to_json()))  # stable
    assert derived.unit_id.startswith("u-unknown-")
    for prefix, value in (("m", derived.model_id), ("c", derived.config_id)):
        assert re.fullmatch(prefix + "[0-9a-f]{12}", value)
    assert re.fullmatch("d[0-9a-f]{12}", derived.fingerprint)
    other = identity_of(Device.from_json({"cpu_model": "Cortex-A72", "ram_total_mb": 8048}))
    assert other.fingerprint != derived.fingerprint


def test_a_devices_repeated_runs_are_averaged_in_the_matrix_and_listed_apart(
    fleet: Fleet, runs: list[LoadedRun], tmp_path: Path
) -> None:
    again = tmp_path / "pi5-a-again" / "run"
    shutil.copytree(fleet.pi_a, again)
    page = render_report([*runs, load_run(again)])
    _, rows = table_cells(page, 'id="device-matrix"')
    assert rows[3] == [
        "pi5-a · uaaaa0000",
        "1.000 100.0 tok/s · 2 runs",
        "1.000 200.0 tok/s · 2 runs",
    ]
    _, board = table_cells(page, 'data-device="pi5-a · uaaaa0000"')
    assert [row[1] for row in board] == ["pi5-a/run", "pi5-a-again/run"] * 2
