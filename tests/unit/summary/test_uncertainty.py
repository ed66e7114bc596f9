"""Bootstrap intervals: worked by hand on tiny samples, seeded, paired for differences,
and recorded in summary.json for every rate and the task's arm-minus-arm figures."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.cli.app import main
from edgebench.summary.uncertainty import RESAMPLES, bootstrap_ci, paired_difference
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.run_fake import RunFake


def test_two_examples_one_right_span_zero_to_one() -> None:
    # Resamples of [0, 1]: mean 0 (1/4), 0.5 (1/2), 1 (1/4); 2.5% and 97.5% fall in the tails.
    assert bootstrap_ci([0, 1]) == [0.0, 1.0]


def test_agrees_with_direct_enumeration_of_three_examples() -> None:
    # All 27 equally likely resamples of [0, 0, 1]: P(mean = 1) = 1/27 > 2.5%, P(0) = 8/27.
    means = [float(np.mean(draw)) for draw in itertools.product([0, 0, 1], repeat=3)]
    exact = [float(q) for q in np.percentile(means, [2.5, 97.5], method="inverted_cdf")]
    assert exact == [0.0, 1.0]
    assert bootstrap_ci([0, 0, 1]) == exact


def test_constant_scores_have_a_point_interval_and_no_examples_none() -> None:
    assert bootstrap_ci([1, 1, 1, 1]) == [1.0, 1.0]
    assert bootstrap_ci([]) is None


def test_ratio_of_sums_and_a_zero_denominator() -> None:
    assert bootstrap_ci([2, 2], [4, 4]) == [0.5, 0.5]
    assert bootstrap_ci([0, 0], [0, 0]) is None


def test_seeded_so_the_same_scores_give_the_same_interval() -> None:
    scores = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1] * 5
    assert bootstrap_ci(scores) == bootstrap_ci(scores)
    lo, hi = bootstrap_ci(scores) or [0, 0]
    assert lo < float(np.mean(scores)) < hi


def test_paired_difference_keeps_what_the_arms_share() -> None:
    base = [0, 1, 0, 1, 1, 0, 0, 1]
    other = [1, 1, 1, 1, 1, 1, 1, 1]  # right wherever base is, and more
    # Unpaired the interval would be wide; paired, mask − none only varies where they differ.
    assert paired_difference(base, base) == (0.0, [0.0, 0.0])
    difference, (lo, hi) = paired_difference(base, other) or (0.0, [0.0, 0.0])
    assert difference == 0.5 and 0.0 <= lo < 0.5 < hi <= 1.0
    assert paired_difference([], []) is None
    with pytest.raises(ValueError):
        paired_difference([1], [1, 0])


def test_an_interval_is_one_draw_of_every_resample_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fast enough for a run whatever its size: each interval draws all its resamples as
    one (RESAMPLES, n) array and works on it whole, never one resample at a time in
    Python (counted: one generator and one draw per interval)."""
    draws: list[tuple[int, ...]] = []
    real = np.random.default_rng

    class Counted:
        def __init__(self, seed: int) -> None:
            self.rng = real(seed)

        def integers(self, *args: Any, size: tuple[int, ...], **kwargs: Any) -> np.ndarray:
            draws.append(size)
            return self.rng.integers(*args, size=size, **kwargs)

    monkeypatch.setattr(np.random, "default_rng", Counted)
    scores = [i % 3 == 0 for i in range(200)]
    for _ in range(6):
        bootstrap_ci(scores)
        paired_difference(scores, scores[::-1])
    assert draws == [(RESAMPLES, 200)] * 12


def test_summary_has_intervals_and_the_paired_mask_minus_none(run_fake: RunFake) -> None:
    outputs = [RIGHT, WRONG] * 10 + [RIGHT] * 20  # none: half right; mask: all right
    result = run_fake(outputs, n=20, constraints=("none", "mask"))
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["bootstrap"] == {
        "method": "percentile bootstrap over examples (paired over example ids for differences)",
        "resamples": 2000,
        "seed": 0,
        "level": 0.95,
        "indicative_below_n": 50,
    }
    none, mask = summary["arms"]
    task = none["families"][summary["task_family"]]
    for name, interval in task["ci95"].items():
        lo, hi = interval
        assert lo <= task["overall"][name] <= hi
    assert task["groups_ci95"]  # per group too
    differences = [d for d in summary["differences"] if d["base_constraint"] == "none"]
    assert {d["other_constraint"] for d in differences} == {"mask"}
    first = differences[0]
    assert first["n"] == 20
    lo, hi = first["ci95"]
    assert lo <= first["difference"] <= hi
    assert mask["families"][summary["task_family"]]["ci95"]


def test_compare_card_and_report_show_intervals_the_difference_and_the_warning(
    run_fake: RunFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = [RIGHT, WRONG] * 10 + [RIGHT] * 20  # --limit 20 --constraint none,mask
    run_dir = run_fake(outputs, n=20, constraints=("none", "mask")).run_dir
    with pytest.raises(SystemExit):
        main(["compare", str(run_dir)])
    out = " ".join(capsys.readouterr().out.split())
    assert "differences on the same examples (paired)" in out
    assert "mask − none" in out and "n < 50: indicative only" in out
    assert re.search(r"\.\d\d–[01]?\.\d\d", out)  # a rate's interval beneath it
    with pytest.raises(SystemExit):
        main(["compare", "--json", str(run_dir)])
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["indicative"] and rows[0]["ci95"]
    assert rows[1]["differences"][0]["vs"] == "mask − none"
    card = tmp_path / "card.md"
    with pytest.raises(SystemExit):
        main(["card", str(run_dir), "-o", str(card)])
    text = card.read_text()
    assert "### Differences on the same examples" in text and "mask − none" in text
    assert "⚠ n &lt; 50: indicative only" in text or "⚠ n < 50: indicative only" in text
    html = tmp_path / "report.html"
    with pytest.raises(SystemExit):
        main(["report", str(run_dir), "--html", str(html)])
    page = html.read_text()
    assert "n &lt; 50: indicative only" in page and "mask − none" in page
    assert "95% bootstrap interval" in page
