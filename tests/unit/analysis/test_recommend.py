"""`recommend` on a fake sweep: budgets that fit, that leave variants out, that nothing
fits; the accuracy floor; the KV-cache rule; the Raspberry Pi verdicts; memory sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.analysis.recommend import (
    DEVICES,
    MIB,
    Recommendation,
    device_verdict,
    parse_memory,
    recommend,
)
from edgebench.errors import UserError
from edgebench.summary import load_run
from tests.helpers.sweep_runs import make_sweep_run

Q8, Q4, Q4_0, Q2 = (f"smollm2-135m-instruct@{q} · mask" for q in ("Q8_0", "Q4_K_M", "Q4_0", "Q2_K"))


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep_run(tmp_path_factory.mktemp("rec") / "sweep", modes="mask")


def by_key(rec: Recommendation) -> dict[str, tuple[str, ...]]:
    """Each variant's reasons for being left out (empty: picked)."""
    return {c.row.key: c.reasons for c in rec.candidates}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4GB", 4 * 10**9),
        ("512MB", 512 * 10**6),
        ("4GiB", 4 * 2**30),
        ("1.5 gib", int(1.5 * 2**30)),
        ("800MiB", 800 * 2**20),
    ],
)
def test_memory_sizes(text: str, expected: int) -> None:
    assert parse_memory(text) == expected


@pytest.mark.parametrize("text", ["4XB", "4", "GB", "-1GB", "4 G B", "0GB"])
def test_a_bad_memory_size_is_a_one_line_error(text: str) -> None:
    with pytest.raises(UserError, match=rf"--max-memory {text}: ") as info:
        parse_memory(text)
    assert "\n" not in str(info.value)


def test_without_a_budget_the_front_is_picked_and_the_dominated_one_says_by_whom(
    sweep_dir: Path,
) -> None:
    rec = recommend(load_run(sweep_dir))
    assert [c.row.key for c in rec.picks] == [Q8, Q4, Q2]  # most accurate first
    assert by_key(rec)[Q4_0] == (f"dominated by {Q4}",)
    strengths = {c.row.key: c.strengths for c in rec.picks}
    assert strengths[Q8] == ("most accurate",)
    assert strengths[Q2] == ("smallest file", "fastest decode", "least memory")
    assert strengths[Q4] == ("a trade-off no other fitting variant beats on all four",)


def test_a_budget_leaves_out_what_does_not_fit_and_the_front_is_redrawn(sweep_dir: Path) -> None:
    rec = recommend(load_run(sweep_dir), budget_bytes=235 * MIB)
    reasons = by_key(rec)
    assert reasons[Q8] == ("over budget by 75 MiB (needs 310 MiB)",)
    assert reasons[Q4_0] == ("over budget by 5 MiB (needs 240 MiB)",)
    assert [c.row.key for c in rec.picks] == [Q4, Q2]
    picked = {c.row.key: c for c in rec.picks}
    assert picked[Q4].strengths == ("most accurate",)  # among those that fit


def test_nothing_fits_is_a_result(sweep_dir: Path) -> None:
    rec = recommend(load_run(sweep_dir), budget_bytes=100 * MIB)
    assert rec.picks == []
    assert by_key(rec)[Q2] == ("over budget by 90 MiB (needs 190 MiB)",)


def test_the_accuracy_floor(sweep_dir: Path) -> None:
    rec = recommend(load_run(sweep_dir), min_accuracy=0.6)
    assert by_key(rec)[Q2] == ("below min accuracy: Field F1 0.250 < 0.6",)
    assert by_key(rec)[Q4_0] == ("below min accuracy: Field F1 0.500 < 0.6",)
    assert [c.row.key for c in rec.picks] == [Q8, Q4]
    both = recommend(load_run(sweep_dir), budget_bytes=200 * MIB, min_accuracy=0.6)
    assert by_key(both)[Q2] == ("below min accuracy: Field F1 0.250 < 0.6",)
    assert by_key(both)[Q8][0].startswith("over budget by 110 MiB")


@pytest.mark.parametrize("floor", [-0.1, 1.5])
def test_a_floor_outside_0_to_1_is_refused(sweep_dir: Path, floor: float) -> None:
    with pytest.raises(UserError, match=r"--min-accuracy .*: must be between 0 and 1"):
        recommend(load_run(sweep_dir), min_accuracy=floor)


def test_llama_peak_rss_already_holds_the_kv_cache_onnx_gets_it_added(tmp_path: Path) -> None:
    run_dir = make_sweep_run(tmp_path / "run", modes="mask")
    rec = recommend(load_run(run_dir))
    q2 = next(c for c in rec.candidates if c.row.key == Q2)
    assert q2.kv_mb is not None and q2.kv_mb > 0
    assert q2.kv_in_peak and q2.need_mb == 190.0  # llama.cpp: allocated at load, not again
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for model in manifest["models"]:
        model["backend"] = "onnx"
    manifest_path.write_text(json.dumps(manifest))
    q2 = next(c for c in recommend(load_run(run_dir)).candidates if c.row.key == Q2)
    assert not q2.kv_in_peak
    assert q2.need_mb == pytest.approx(190.0 + q2.kv_mb)


def test_pi_verdicts_from_the_measured_need() -> None:
    two, four, eight = DEVICES
    assert (two.usable_mb, four.usable_mb, eight.usable_mb) == (1600, 3648, 7744)
    assert device_verdict(1000, two) == "fits"
    assert device_verdict(1500, two) == "tight"  # 100 MiB left of 1600
    assert device_verdict(1700, two) == "no (+100 MiB)"
    assert device_verdict(1700, four) == "fits"
    assert device_verdict(None, eight) == "unknown"  # never guessed from the file size


def test_a_run_without_memory_figures_is_never_judged_by_file_size(tmp_path: Path) -> None:
    run_dir = make_sweep_run(tmp_path / "run", modes="mask")
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for arm in manifest["arms"]:
        arm["memory"] = None
    manifest_path.write_text(json.dumps(manifest))
    rec = recommend(load_run(run_dir), budget_bytes=4 * 10**9)
    assert rec.picks == []
    assert set(by_key(rec).values()) == {("no peak RSS measured: its memory is unknown",)}
