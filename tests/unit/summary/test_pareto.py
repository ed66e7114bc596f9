"""The Pareto front on hand-made points: who dominates whom, ties, missing figures."""

from __future__ import annotations

from edgebench.summary.pareto import Point, dominated_by, dominates, front


def point(key: str, accuracy: float | None, size: float, speed: float, rss: float) -> Point:
    return Point(
        key, {"accuracy": accuracy, "size_mb": size, "decode_tok_s": speed, "peak_rss_mb": rss}
    )


Q8 = point("Q8_0", 0.90, 145, 50, 310)
Q4 = point("Q4_K_M", 0.80, 105, 100, 230)
Q4_0 = point("Q4_0", 0.70, 110, 90, 240)  # worse than Q4_K_M on all four
Q2 = point("Q2_K", 0.40, 88, 120, 190)


def test_a_point_worse_on_every_objective_is_dominated_and_off_the_front() -> None:
    assert dominates(Q4, Q4_0)
    assert not dominates(Q4_0, Q4)
    assert dominated_by([Q8, Q4, Q4_0, Q2]) == {
        "Q8_0": [],
        "Q4_K_M": [],
        "Q4_0": ["Q4_K_M"],
        "Q2_K": [],
    }
    assert front([Q8, Q4, Q4_0, Q2]) == ["Q8_0", "Q4_K_M", "Q2_K"]


def test_better_on_one_objective_is_enough_to_stay_on_the_front() -> None:
    # as accurate, as big, as fast as Q4_K_M but 1 MB less memory: it dominates Q4_K_M
    leaner = point("lean", 0.80, 105, 100, 229)
    assert dominates(leaner, Q4)
    assert front([Q4, leaner]) == ["lean"]
    # more accurate but bigger: a trade-off, both stay
    assert front([Q8, Q4]) == ["Q8_0", "Q4_K_M"]


def test_ties_dominate_neither_and_both_stay() -> None:
    twin = point("twin", 0.80, 105, 100, 230)
    assert not dominates(twin, Q4) and not dominates(Q4, twin)
    assert front([Q4, twin, Q4_0]) == ["Q4_K_M", "twin"]
    # floating-point noise in a derived figure is a tie, not a win
    noisy = point("noisy", 0.80, 105, 100.00000000001, 230)
    assert front([Q4, noisy]) == ["Q4_K_M", "noisy"]


def test_a_missing_figure_counts_as_the_worst() -> None:
    unscored = point("unscored", None, 50, 500, 50)
    assert not dominates(unscored, Q2)  # never kept on the front by an unmeasured score
    assert dominates(point("scored", 0.0, 50, 500, 50), unscored)
    assert front([unscored]) == ["unscored"]  # alone, nothing beats it
