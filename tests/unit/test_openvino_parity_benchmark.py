"""benchmarks/openvino_parity.py's own logic: cutting a sequence at its end token and what
the comparison against the reference counts. The runtimes are measured by running the
benchmark, not here."""

from __future__ import annotations

import math
from types import ModuleType

import pytest

from tests.helpers.scripts import load_script

EOG = frozenset({2, 9})


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("benchmarks/openvino_parity.py")


def test_a_sequence_is_cut_after_its_first_end_token(bench: ModuleType) -> None:
    assert bench.cut_at_end([5, 6, 9, 7, 2], EOG) == [5, 6, 9]
    assert bench.cut_at_end([2, 5], EOG) == [2]
    assert bench.cut_at_end([5, 6, 7], EOG) == [5, 6, 7]
    assert bench.cut_at_end([], EOG) == []


def test_identical_sequences_agree_on_every_reference_position(bench: ModuleType) -> None:
    ref = [[1, 2], [3, 4, 5]]
    parity = bench.compare(ref, [list(s) for s in ref])
    assert (parity.prompts, parity.identical) == (2, 2)
    assert parity.mean_prefix == 2.5
    assert parity.divergences == ()
    assert (parity.agreed, parity.compared, parity.top1) == (5, 5, 1.0)


def test_agreement_counts_the_common_prefix_and_one_step_at_the_divergence(
    bench: ModuleType,
) -> None:
    ref = [[1, 2, 3, 4], [5, 6, 7], [8, 9]]
    cand = [[1, 2, 0, 4], [5, 6, 7], [0, 9]]
    parity = bench.compare(ref, cand)
    assert parity.identical == 1
    assert parity.divergences == (2, 0)
    assert parity.mean_prefix == pytest.approx((2 + 3 + 0) / 3)
    # Positions after a divergence are not compared: the contexts differ there.
    assert (parity.agreed, parity.compared) == (5, 5 + 2)
    assert parity.top1 == pytest.approx(5 / 7)


def test_a_candidate_that_ends_early_diverges_where_it_stopped(bench: ModuleType) -> None:
    parity = bench.compare([[1, 2, 3, 4]], [[1, 2, 2]])
    assert parity.divergences == (2,)
    assert (parity.agreed, parity.compared) == (2, 3)


def test_a_candidate_that_goes_on_past_the_reference_adds_no_reference_position(
    bench: ModuleType,
) -> None:
    parity = bench.compare([[1, 2]], [[1, 2, 3]])
    assert parity.identical == 0
    assert parity.divergences == (2,)
    assert (parity.agreed, parity.compared) == (2, 2)


def test_nothing_to_compare_is_nan_and_unequal_prompt_counts_refuse(bench: ModuleType) -> None:
    assert math.isnan(bench.compare([], []).top1)
    with pytest.raises(ValueError, match="2 reference sequences, 1 candidates"):
        bench.compare([[1], [2]], [[1]])
