"""What a metric family is: pure per-sample scores, a separate aggregation, declared
directions, and named parameters that a run records in its manifest.

A family scores one parsed output against the expected value and the example's JSON
Schema, `score(output, expected, schema) -> {name: number}`, and never sees a model,
a clock or a file: `edgebench score` can re-run it on stored samples.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from edgebench.scoring.parse import ParseResult

Scores = dict[str, float | int]


@dataclass(frozen=True)
class Family:
    """Base of every family. Subclasses declare the class attributes below, their
    parameters as dataclass fields (with defaults), and implement `score`.

    The default aggregation is the mean of each per-sample score over the samples."""

    name: ClassVar[str]
    description: ClassVar[str]
    source: ClassVar[str]  # the paper or document that defines the scores
    score_names: ClassVar[tuple[str, ...]]  # per-sample scores, in table order

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        raise NotImplementedError

    @property
    def summary_names(self) -> tuple[str, ...]:
        """The aggregated figures, in table order."""
        return self.score_names

    @property
    def higher_is_better(self) -> dict[str, bool]:
        return dict.fromkeys(self.summary_names, True)

    def parameters(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def aggregate(self, samples: Sequence[Scores]) -> dict[str, Any]:
        """Mean of each score; a sample missing a score counts as 0."""
        n = len(samples)
        result: dict[str, Any] = {"n": n}
        for name in self.score_names:
            total = sum(float(s.get(name, 0.0)) for s in samples)
            result[name] = total / n if n else 0.0
        return result

    def describe(self) -> dict[str, Any]:
        """The manifest entry: what the family is and the parameters it ran with."""
        return {
            "description": self.description,
            "source": self.source,
            "scores": list(self.score_names),
            "summary": list(self.summary_names),
            "higher_is_better": self.higher_is_better,
            "parameters": self.parameters(),
        }
