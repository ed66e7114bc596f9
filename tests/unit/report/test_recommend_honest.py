"""`recommend` claims only what the run measured: an arm scoring 0 or with no score is
never picked, a speed or memory lead is called so only when it is measurably apart, a
file is "smallest" only when the files differ, and a plain run is not called a sweep."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from edgebench.analysis.recommend import recommend
from edgebench.report.recommend_view import render
from edgebench.summary import LoadedRun, load_run
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.sweep_runs import make_sweep_run, variant

MODEL = "smollm2-135m-instruct@Q8_0"


def render_text(renderable: RenderableType, width: int = 200) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


@pytest.fixture(scope="module")
def plain_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One model under none, json and mask, where mask answers every example wrong."""
    out = tmp_path_factory.mktemp("plain") / "run"
    return make_sweep_run(
        out,
        modes="none,json,mask",
        variants=(variant("Q8_0"),),
        fidelity=False,
        wrong_modes=("mask",),
    )


def test_an_arm_scoring_0_is_never_ticked(plain_dir: Path) -> None:
    rec = recommend(load_run(plain_dir))
    assert [c.row.key for c in rec.picks] == [f"{MODEL} · none", f"{MODEL} · json"]
    (left_out,) = rec.excluded
    assert left_out.row.key == f"{MODEL} · mask"
    assert left_out.reasons == ("scores 0: Field F1 0.000",)
    # an explicit floor of 0 keeps the rule: above 0
    assert f"{MODEL} · mask" not in [
        c.row.key for c in recommend(load_run(plain_dir), None, 0.0).picks
    ]
    text = render_text(render(rec), width=200)
    assert f"✓ {MODEL} · mask" not in text and f"✗ {MODEL} · mask: scores 0" in text


def test_equal_arms_have_no_measurable_difference_and_one_file_is_not_smallest(
    plain_dir: Path,
) -> None:
    rec = recommend(load_run(plain_dir))
    for pick in rec.picks:  # same file, same speed, same memory: no lead claimed
        assert pick.strengths == (
            "most accurate",
            "no measurable difference in decode speed, memory",
        )
    text = " ".join(render_text(render(rec), width=200).split())
    assert "smallest file" not in text and "fastest decode" not in text
    assert "least memory" not in text


def test_a_plain_run_is_not_called_a_sweep(plain_dir: Path, tmp_path: Path) -> None:
    text = render_text(render(recommend(load_run(plain_dir))), width=200)
    assert (
        "sweep" not in text
        and "constraint modes · run · runtime llama.cpp · front on Field F1" in text
    )
    swept = make_sweep_run(tmp_path / "sweep", modes="mask", fidelity=False)
    assert "sweep · sweep · runtime llama.cpp · front on" in render_text(
        render(recommend(load_run(swept))), width=200
    )


def _with_decode(run: LoadedRun, intervals: dict[str, list[float]]) -> LoadedRun:
    arms = [
        replace(a, perf=replace(a.perf, p50_ci95={"decode_tok_s": intervals[a.constraint]}))
        if a.constraint in intervals
        else a
        for a in run.summary.arms
    ]
    return replace(run, summary=replace(run.summary, arms=arms))


def test_fastest_only_when_the_intervals_separate(plain_dir: Path) -> None:
    run = load_run(plain_dir)
    decode = run.summary.arms[0].perf.decode_tok_s.p50
    assert decode is not None
    # json's p50 is the same as none's; give json a higher point and intervals
    arms = [
        replace(a, perf=replace(a.perf, decode_tok_s=replace(a.perf.decode_tok_s, p50=decode * 2)))
        if a.constraint == "json"
        else a
        for a in run.summary.arms
    ]
    faster = replace(run, summary=replace(run.summary, arms=arms))
    overlapping = _with_decode(
        faster, {"none": [decode * 0.8, decode * 1.5], "json": [decode * 1.4, decode * 2.5]}
    )
    strengths = {c.row.constraint: c.strengths for c in recommend(overlapping).picks}
    assert "fastest decode" not in strengths["json"]
    assert "no measurable difference in decode speed, memory" in strengths["json"]
    apart = _with_decode(
        faster, {"none": [decode * 0.8, decode * 1.2], "json": [decode * 1.6, decode * 2.5]}
    )
    rec = recommend(apart)
    strengths = {c.row.constraint: c.strengths for c in rec.picks}
    assert "fastest decode" in strengths["json"]
    # the pick names its decode speed with the interval it was judged on
    text = " ".join(render_text(render(rec)).split())
    assert f"{decode * 2:.1f} tok/s [{decode * 1.6:.1f}, {decode * 2.5:.1f}]" in text


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("1.5", "--min-accuracy 1.5: must be between 0 and 1"),
        ("-0.1", "--min-accuracy -0.1: must be between 0 and 1"),
        ("nan", "--min-accuracy nan: must be between 0 and 1"),
        ("inf", "--min-accuracy inf: must be between 0 and 1"),
        ("high", "--min-accuracy"),
    ],
)
def test_bad_min_accuracy_is_one_line(
    plain_dir: Path, capsys: pytest.CaptureFixture[str], value: str, fragment: str
) -> None:
    code, err = run_cli(capsys, "recommend", str(plain_dir), "--min-accuracy", value)
    assert_one_line_error(code, err, fragment)


def test_a_lone_pick_claims_no_lead(tmp_path: Path) -> None:
    swept = make_sweep_run(tmp_path / "sweep", modes="mask", fidelity=False)
    rec = recommend(load_run(swept), budget_bytes=200 * 2**20)  # only Q2_K (190 MiB) fits
    (pick,) = rec.picks
    assert pick.strengths == ("the only one left",)
