"""A consistency run is first-class in `compare`, `card` and `report`: its arm at each
temperature is a row with the task's figures over that temperature's generations and
its consistency figures (mean over prompts, intervals over prompts), through the same
data path as any run (summary `consistency.arms`, analysis/rundata.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from tests.helpers.cli import stdout_of
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.run_folder import summary_of

ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]
TEMPERATURES = ("0.5", "0.8")


@pytest.fixture
def run_dir(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Path:
    """A consistency run of two prompts, 3 samples at each of two temperatures."""
    cli: RoundtripCli = roundtrip_cli(
        capsys, monkeypatch, tmp_path, [{"a": 1, "b": "x"}, {"c": [1]}]
    )
    cli.answer_with(FakeBackend(sampled=ANSWERS))
    code, err = cli.start("consistency", "--samples", "3", "--temperatures", ",".join(TEMPERATURES))
    assert code == 0, err
    return cli.out


def test_summary_has_the_arm_at_each_temperature(run_dir: Path) -> None:
    consistency = summary_of(run_dir)["consistency"]
    arms = consistency["arms"]
    assert [arm["temperature"] for arm in arms] == [0.5, 0.8]
    for arm, key in zip(arms, TEMPERATURES, strict=True):
        at = consistency["by_temperature"][key]
        assert arm["n_examples"] == at["n_generations"] == 6
        task = arm["families"]["structure"]
        assert task["overall"] == at["task_metrics"]
        family = arm["families"]["consistency"]
        assert family["overall"]["n"] == at["n_prompts"] == 2
        assert family["overall"]["score"] == pytest.approx(at["consistency"])
        assert family["overall"]["sted_mean"] == pytest.approx(at["sted_mean"])
        assert family["ci95"]["score"] is not None


def test_compare_has_a_row_per_temperature(
    run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = json.loads(stdout_of(capsys, "compare", "--json", str(run_dir)))
    assert [row["temperature"] for row in rows] == [0.5, 0.8]
    by_temperature = summary_of(run_dir)["consistency"]["by_temperature"]
    for row, key in zip(rows, TEMPERATURES, strict=True):
        at = by_temperature[key]
        assert row["n"] == 6
        assert row["valid_json"] == pytest.approx(at["task_metrics"]["valid_json"])
        assert row["csa"] == pytest.approx(at["task_metrics"]["csa"])
        assert row["consistency"] == pytest.approx(at["consistency"])
        assert row["ci95"]["consistency"] is not None
    monkeypatch.setenv("COLUMNS", "200")
    shown = stdout_of(capsys, "compare", str(run_dir))
    assert "0.50" in shown and "0.80" in shown and "cons" in shown
    assert f"{rows[0]['consistency']:.3f}" in shown


@pytest.mark.parametrize(
    ("command", "option", "name", "figure"),
    [
        ("card", "--out", "card.md", "consistency score"),
        ("report", "--html", "report.html", "consistency.score"),
    ],
)
def test_card_and_report_show_each_temperature(
    run_dir: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
    name: str,
    figure: str,
) -> None:
    written = run_dir / name
    stdout_of(capsys, command, str(run_dir), option, str(written))
    text = written.read_text()
    for key in TEMPERATURES:
        assert f"none · T={key}" in text
    assert figure in text
