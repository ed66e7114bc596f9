"""Speed intervals: the p50 of each speed figure and the paired decode ratio to `none`,
bootstrapped over examples like the accuracy intervals; worked by hand on tiny cases."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from edgebench.cli.app import main
from edgebench.report.table import render_summary
from edgebench.summary import load_run
from edgebench.summary.uncertainty import median_ci, paired_median_ratio
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.run_fake import RunFake


def test_median_of_two_examples_spans_both() -> None:
    # Resamples of [1, 3]: medians 1 (1/4), 2 (1/2), 3 (1/4): both tails hold more than 2.5%.
    assert median_ci([1.0, 3.0]) == [1.0, 3.0]


def test_median_agrees_with_direct_enumeration_of_three_examples() -> None:
    # All 27 equally likely resamples of [10, 20, 40]; P(median = 40) = 7/27 > 2.5%.
    medians = [float(np.median(draw)) for draw in itertools.product([10, 20, 40], repeat=3)]
    exact = [float(q) for q in np.percentile(medians, [2.5, 97.5], method="inverted_cdf")]
    assert exact == [10.0, 40.0]
    assert median_ci([10.0, 20.0, 40.0]) == exact


def test_identical_values_have_a_point_interval_and_no_examples_none() -> None:
    assert median_ci([52.3] * 7) == [52.3, 52.3]
    assert median_ci([]) is None


def test_paired_ratio_keeps_what_the_examples_share() -> None:
    # Every example twice as fast in `other`: each resample's p50s keep that ratio, though
    # the examples themselves differ fivefold (unpaired, the ratio would swing 0.4-10).
    base = [10.0, 20.0, 50.0, 15.0]
    assert paired_median_ratio(base, [2 * v for v in base]) == [2.0, 2.0]
    assert paired_median_ratio(base, base) == [1.0, 1.0]
    assert paired_median_ratio([], []) is None
    assert paired_median_ratio([0.0, 0.0], [1.0, 2.0]) is None  # no base speed, no ratio
    with pytest.raises(ValueError):
        paired_median_ratio([1.0], [1.0, 2.0])


def test_paired_ratio_of_two_examples_by_hand() -> None:
    # base [10, 10], other [10, 30]: resamples {1st,1st} 1.0, mixed 2.0, {2nd,2nd} 3.0.
    assert paired_median_ratio([10.0, 10.0], [10.0, 30.0]) == [1.0, 3.0]


def test_summary_has_speed_intervals_and_the_ratio_interval(run_fake: RunFake) -> None:
    outputs = [RIGHT, WRONG] * 10 + [RIGHT] * 20  # --limit 20 --constraint none,mask
    result = run_fake(outputs, n=20, constraints=("none", "mask"))
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["schema_version"] == "2.11"
    none, mask = summary["arms"]
    for arm in (none, mask):
        perf = arm["perf"]
        assert set(perf["p50_ci95"]) == {"ttft_s", "latency_s", "prefill_tok_s", "decode_tok_s"}
        for figure, (lo, hi) in perf["p50_ci95"].items():
            assert lo <= perf[figure]["p50"] <= hi
        # the fake decodes every token in the same time: one speed, a point interval
        decode = perf["decode_tok_s"]["p50"]
        assert perf["p50_ci95"]["decode_tok_s"] == [decode, decode]
    assert none["perf"]["decode_ratio_to_none_ci95"] is None  # `none` is the base
    lo, hi = mask["perf"]["decode_ratio_to_none_ci95"]
    assert lo <= mask["decode_ratio_to_none"] <= hi


def test_no_ratio_interval_without_a_none_arm(run_fake: RunFake) -> None:
    result = run_fake([RIGHT] * 3, n=3, constraints=("mask",))
    (arm,) = json.loads((result.run_dir / "summary.json").read_text())["arms"]
    assert arm["decode_ratio_to_none"] is None
    assert arm["perf"]["decode_ratio_to_none_ci95"] is None


def test_compare_and_the_run_table_show_the_speed_intervals(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = run_fake([RIGHT, WRONG] * 4, n=4, constraints=("none", "mask")).run_dir
    with pytest.raises(SystemExit):
        main(["compare", "--json", str(run_dir)])
    none, mask = json.loads(capsys.readouterr().out)
    decode = mask["decode_tok_s_p50"]
    assert mask["ci95"]["decode_tok_s_p50"] == [decode, decode]
    assert set(mask["ci95"]) >= {"ttft_s_p50", "latency_s_p50", "decode_ratio_to_none"}
    assert mask["ci95"]["decode_ratio_to_none"] is not None
    assert none["ci95"]["decode_ratio_to_none"] is None
    assert "peak_rss_mib" in mask and "peak_rss_mb" not in mask
    with pytest.raises(SystemExit):
        main(["compare", str(run_dir)])
    out = " ".join(capsys.readouterr().out.split())
    assert "RSS MiB" in out and "RSS MB" not in out
    assert f"{decode:.1f}–{decode:.1f}" in out  # under tok/s, as its value is shown
    summary = load_run(run_dir).summary
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(render_summary(summary))
    table = " ".join(console.export_text().split())
    assert "p50 95% CI" in table and f"[{decode:.1f}, {decode:.1f}]" in table
    assert "MiB" in table and "peak RSS" in table


def test_card_and_report_show_the_speed_intervals(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = run_fake([RIGHT, WRONG] * 4, n=4, constraints=("none", "mask")).run_dir
    mask = load_run(run_dir).summary.arms[1]
    decode, ratio = mask.perf.decode_tok_s.p50, mask.decode_ratio_to_none
    assert decode is not None and ratio is not None
    card = tmp_path / "card.md"
    with pytest.raises(SystemExit):
        main(["card", str(run_dir), "--out", str(card)])
    text = card.read_text().replace("\\[", "[").replace("\\]", "]")  # Markdown-escaped
    assert "| p50 95% CI |" in text and "decode × none ↑" in text
    assert f"{decode:.1f} [{decode:.1f}, {decode:.1f}]" in text  # the summary table
    assert f"[{decode:.3f}, {decode:.3f}]" in text  # the performance table
    assert f"{ratio:.2f} [{ratio:.2f}, {ratio:.2f}]" in text  # paired × none
    assert "peak RSS (MiB)" in text
    page = tmp_path / "report.html"
    with pytest.raises(SystemExit):
        main(["report", str(run_dir), "--out", str(page)])
    html = page.read_text()
    assert f"[{decode:.1f}, {decode:.1f}]" in html and "decode × none" in html
