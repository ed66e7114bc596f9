"""What every family inherits: `evaluate` from `score` (no details), the mean aggregation,
and the manifest entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from edgebench.metrics.base import Evaluation, Family, Scores
from edgebench.scoring.parse import ParseResult, parse_json_output


@dataclass(frozen=True)
class Length(Family):
    """A toy family: 1 when the output is a list of the expected length."""

    name = "length"
    description = "list length"
    source = "none"
    score_names = ("right_length", "valid_json")

    bonus: float = 0.0

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        right = isinstance(output.value, list) and len(output.value) == len(expected)
        return {"right_length": int(right) + self.bonus, "valid_json": int(output.ok)}


def test_evaluate_is_score_without_details() -> None:
    evaluation = Length().evaluate(parse_json_output("[1, 2]"), [0, 0], {})
    assert evaluation == Evaluation({"right_length": 1, "valid_json": 1}, {})


def test_the_default_aggregation_is_the_mean_and_a_missing_score_counts_zero() -> None:
    family = Length()
    samples = [{"right_length": 1, "valid_json": 1}, {"valid_json": 1}, {"right_length": 1}]
    figures = family.aggregate(samples)
    assert figures == {
        "n": 3,
        "right_length": pytest.approx(2 / 3),
        "valid_json": pytest.approx(2 / 3),
    }
    # no scored sample: no value, not 0
    assert family.aggregate([]) == {"n": 0, "right_length": None, "valid_json": None}
    assert family.breakdowns([]) == {}


def test_the_record_names_role_directions_and_parameters() -> None:
    record = Length(bonus=0.5).record("extra")
    assert record.role == "extra"
    assert record.scores == record.summary == ["right_length", "valid_json"]
    assert record.higher_is_better == {"right_length": True, "valid_json": True}
    assert record.parameters == {"bonus": 0.5}
    assert (record.description, record.source) == ("list length", "none")
