"""A card publishes in model-index only the speed the machine earned: no speed metric of a
mode whose examples were contended (or whose contention was never measured), a line in
the body saying why with the contended share, and `--allow-contended` to publish anyway."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from edgebench.cli.app import main
from edgebench.report.card import SPEED_METRICS, write_card
from edgebench.runfolder.records import ArmSummary
from edgebench.summary import LoadedRun, load_run
from tests.helpers.contention import with_contention
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.run_fake import RunFake


@pytest.fixture
def run(run_fake: RunFake) -> LoadedRun:
    outputs = [RIGHT, WRONG, RIGHT, RIGHT] * 2  # --limit 4 --constraint none,mask
    return load_run(run_fake(outputs, n=4, constraints=("none", "mask")).run_dir)


def _metric_types(card: Path) -> dict[str, set[str]]:
    """Constraint mode -> the model-index metric types published for it."""
    loaded = ModelCard.load(card, ignore_metadata_errors=False)
    found: dict[str, set[str]] = {}
    for result in loaded.data.eval_results:
        mode = result.metric_config.split(";")[0].removeprefix("constraint=")
        found.setdefault(mode, set()).add(result.metric_type)
    return found


def test_a_contended_run_has_no_speed_metric_in_model_index(run: LoadedRun, tmp_path: Path) -> None:
    card = tmp_path / "card.md"
    write_card(with_contention(run, speed_clean=False, contended={"none": 3, "mask": 4}), card)
    published = _metric_types(card)
    for mode in ("none", "mask"):
        assert not published[mode] & set(SPEED_METRICS)
        assert {"json_exact", "peak_rss_mib"} <= published[mode]  # accuracy, memory stay
    text = " ".join(card.read_text().split())
    assert "none: speed not published in model-index: 3 of 4 examples (75%) were contended" in text
    assert "mask: speed not published in model-index: 4 of 4 examples (100%)" in text


def test_a_clean_arm_is_published_beside_a_contended_one(run: LoadedRun, tmp_path: Path) -> None:
    clean = with_contention(run, speed_clean=True)
    arms = [a if a.constraint == "none" else _contended(a) for a in clean.summary.arms]
    card = tmp_path / "card.md"
    write_card(replace(clean, summary=replace(clean.summary, arms=arms)), card)
    published = _metric_types(card)
    assert set(SPEED_METRICS) <= published["none"]
    assert not published["mask"] & set(SPEED_METRICS)
    text = card.read_text()
    assert "none: speed not published" not in text and "mask: speed not published" in text


def _contended(arm: ArmSummary) -> ArmSummary:
    return replace(arm, perf=replace(arm.perf, speed_clean=False, contended_examples=1))


def test_unmeasured_contention_is_not_clean(run: LoadedRun, tmp_path: Path) -> None:
    card = tmp_path / "card.md"
    write_card(with_contention(run, speed_clean=None), card)
    assert not _metric_types(card)["mask"] & set(SPEED_METRICS)
    text = card.read_text()
    assert "contention was not measured in this run (recorded from format 2.9 on)" in text


def test_allow_contended_publishes_and_says_so(run: LoadedRun, tmp_path: Path) -> None:
    card = tmp_path / "card.md"
    write_card(with_contention(run, speed_clean=False), card, allow_contended=True)
    assert set(SPEED_METRICS) <= _metric_types(card)["mask"]
    assert "mask: speed published with --allow-contended, though 4 of 4" in card.read_text()


def test_cli_allow_contended(run: LoadedRun, tmp_path: Path) -> None:
    card = tmp_path / "card.md"
    with pytest.raises(SystemExit) as exit_info:
        main(["card", str(run.path), "--out", str(card), "--allow-contended"])
    assert exit_info.value.code == 0
    assert set(SPEED_METRICS) <= _metric_types(card)["none"]
