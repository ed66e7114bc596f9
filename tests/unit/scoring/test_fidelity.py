"""KL divergence and top-1 agreement against hand-computed cases (scoring/fidelity.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgebench.scoring.fidelity import (
    PositionScores,
    compare_logits,
    log_softmax,
    summarize_positions,
)


def logits_of(*probabilities: list[float]) -> np.ndarray:
    """Rows of logits whose softmax is each given distribution (plus an arbitrary shift:
    logits are only defined up to a constant)."""
    return np.log(np.array(probabilities)) + 3.0


def test_kl_of_two_positions_matches_the_hand_computation() -> None:
    # Position 1: p = [1/2, 1/4, 1/4], q = [1/4, 1/2, 1/4]
    #   KL = 1/2 ln(2) + 1/4 ln(1/2) + 1/4 ln(1) = 1/4 ln 2 = 0.173287 nats
    # Position 2: p = [0.8, 0.1, 0.1], q = [0.6, 0.2, 0.2]
    #   KL = 0.8 ln(4/3) + 2 x 0.1 ln(1/2) = 0.230146 - 0.138629 = 0.091517 nats
    reference = logits_of([0.5, 0.25, 0.25], [0.8, 0.1, 0.1])
    variant = logits_of([0.25, 0.5, 0.25], [0.6, 0.2, 0.2])
    scores = compare_logits(reference, variant)
    assert scores.kl[0] == pytest.approx(0.25 * math.log(2), abs=1e-12)
    assert scores.kl[0] == pytest.approx(0.1733, abs=1e-4)
    assert scores.kl[1] == pytest.approx(0.8 * math.log(4 / 3) - 0.2 * math.log(2), abs=1e-12)
    assert scores.kl[1] == pytest.approx(0.091517, abs=1e-6)
    # top tokens: 0 vs 1 (disagree), 0 vs 0 (agree)
    assert scores.same_top.tolist() == [False, True]
    assert scores.positions == 2


def test_kl_direction_is_reference_to_variant() -> None:
    # KL(q || p) for the second position above = 0.6 ln(3/4) + 0.4 ln 2 = 0.104648:
    # a different number, so the direction is checked, not assumed.
    forward = compare_logits(logits_of([0.8, 0.1, 0.1]), logits_of([0.6, 0.2, 0.2]))
    backward = compare_logits(logits_of([0.6, 0.2, 0.2]), logits_of([0.8, 0.1, 0.1]))
    assert forward.kl[0] == pytest.approx(0.091517, abs=1e-6)
    assert backward.kl[0] == pytest.approx(0.6 * math.log(0.75) + 0.4 * math.log(2), abs=1e-12)


def test_identical_logits_give_zero_and_agreement() -> None:
    rows = np.random.default_rng(0).normal(size=(3, 50)).astype(np.float32)
    scores = compare_logits(rows, rows.copy())
    assert scores.kl.tolist() == [0.0, 0.0, 0.0]
    assert scores.same_top.all()


def test_top1_ties_go_to_the_lowest_token_id_in_both_models() -> None:
    reference = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 2.0, 2.0]])
    variant = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 2.0, 1.0]])
    # tie 0/1 vs tie 0/1 -> 0 = 0; tie 0/1 vs tie 1/2 -> 0 != 1; tie 1/2 vs 1 -> 1 = 1
    assert compare_logits(reference, variant).same_top.tolist() == [True, False, True]


def test_log_softmax_survives_huge_logits_and_sums_to_one() -> None:
    rows = log_softmax(np.array([[1000.0, 0.0, -1000.0]], dtype=np.float32))
    assert rows.dtype == np.float64
    assert np.exp(rows).sum() == pytest.approx(1.0)
    assert rows[0, 0] == pytest.approx(0.0)


def test_a_token_the_variant_rules_out_gives_a_large_finite_kl() -> None:
    scores = compare_logits(np.array([[0.0, 0.0]]), np.array([[0.0, -80.0]]))
    # p = [1/2, 1/2], q ~ [1, e^-80]: KL ~ 1/2 (80) - ln 2 = 39.3 nats, never inf or NaN
    assert scores.kl[0] == pytest.approx(40 - math.log(2), abs=1e-6)


def test_mean_median_and_p99_over_positions() -> None:
    # kl over 5 positions from two examples: 0, 0.1, 0.2, 0.3, 10
    #   mean = 10.6 / 5 = 2.12; median = 0.2
    #   p99 (linear, as llama.cpp): index 0.99 x 4 = 3.96 -> 0.3 + 0.96 x (10 - 0.3) = 9.612
    first = PositionScores(np.array([0.3, 0.0]), np.array([True, False]))
    second = PositionScores(np.array([10.0, 0.1, 0.2]), np.array([True, True, True]))
    figures = summarize_positions([first, second])
    assert figures.kl_mean == pytest.approx(2.12)
    assert figures.kl_median == pytest.approx(0.2)
    assert figures.kl_p99 == pytest.approx(9.612)
    assert figures.top1_agreement == pytest.approx(4 / 5)
    assert figures.positions == 5


def test_an_even_count_has_the_midpoint_median() -> None:
    figures = summarize_positions(
        [PositionScores(np.array([0.4, 0.1, 0.2, 0.3]), np.ones(4, bool))]
    )
    assert figures.kl_median == pytest.approx(0.25)


def test_nothing_scored_gives_no_figures() -> None:
    figures = summarize_positions([PositionScores(np.empty(0), np.empty(0, dtype=bool))])
    assert figures.kl_mean is None and figures.top1_agreement is None
    assert figures.positions == 0
    assert summarize_positions([]).positions == 0


def test_logits_of_different_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="different shapes"):
        compare_logits(np.zeros((2, 3)), np.zeros((2, 4)))
