"""What a metric family is: pure per-sample scores of a parsed output, a separate
aggregation, declared directions, and named parameters that a run records.

A family scores one parsed output against the expected value and the example's JSON
Schema, `evaluate(output, expected, schema) -> Evaluation(scores, details)`, and never
sees a model, a clock or a file: `edgebench score` can run it again on stored samples.
Everything a summary knows about a family's scores lives here too: how they aggregate,
which score says "valid against the schema", and any breakdown of its own (DeepJSONEval's
key matching per leaf element type).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from edgebench.runfolder.records import FamilyRecord
from edgebench.scoring.parse import ParseResult

Scores = dict[str, float | int]
Figures = dict[str, Any]


@dataclass(frozen=True)
class Evaluation:
    """One family's verdict on one output: its scores, and what explains them (schema
    errors, per-type scores) for readers of samples.jsonl."""

    scores: Scores
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scored:
    """One scored sample as a family's summary sees it."""

    scores: Scores
    details: dict[str, Any]
    groups: dict[str, str]


@dataclass(frozen=True)
class Family:
    """Base of every family. Subclasses declare the class attributes below, their
    parameters as dataclass fields (with defaults), and implement `score` (or `evaluate`,
    when they explain their scores).

    The default aggregation is the mean of each per-sample score over the samples."""

    name: ClassVar[str]
    description: ClassVar[str]
    source: ClassVar[str]  # the paper that defines the scores: title and arXiv id
    score_names: ClassVar[tuple[str, ...]]  # per-sample scores, in table order
    # The score that says "the output parses and validates against its schema", if any:
    # a summary says why outputs failed it (cut at max_tokens, refused schema ...).
    schema_score: ClassVar[str | None] = None
    # The score that says "the answer equals the expected one", if any (J per exact answer).
    exact_score: ClassVar[str | None] = None

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        raise NotImplementedError

    def evaluate(self, output: ParseResult, expected: Any, schema: Any) -> Evaluation:
        return Evaluation(self.score(output, expected, schema))

    @property
    def summary_names(self) -> tuple[str, ...]:
        """The aggregated figures, in table order."""
        return self.score_names

    @property
    def higher_is_better(self) -> dict[str, bool]:
        return dict.fromkeys(self.summary_names, True)

    def parameters(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def aggregate(self, samples: Sequence[Scores]) -> Figures:
        """Mean of each score; a sample missing a score counts as 0. With no sample (a
        group whose examples were all skipped) every figure is None: no value, not 0."""
        n = len(samples)
        result: Figures = {"n": n}
        for name in self.score_names:
            total = sum(float(s.get(name, 0.0)) for s in samples)
            result[name] = total / n if n else None
        return result

    def interval_inputs(self) -> dict[str, tuple[str, str | None]]:
        """Figure -> (numerator score, denominator score or None) for its bootstrap
        interval: None, the figure is the mean of the score (as `aggregate` does); a name,
        the figure is sum(numerator) / sum(denominator). A figure left out has none."""
        return {name: (name, None) for name in self.score_names}

    def breakdowns(self, samples: Sequence[Scored]) -> dict[str, dict[str, Figures]]:
        """Tables of the family's own beyond the examples' groups (none by default)."""
        return {}

    def record(self, role: str) -> FamilyRecord:
        """The manifest entry: what the family is and the parameters it ran with."""
        return FamilyRecord(
            role=role,  # type: ignore[arg-type]
            description=self.description,
            source=self.source,
            scores=list(self.score_names),
            summary=list(self.summary_names),
            higher_is_better=self.higher_is_better,
            parameters=self.parameters(),
        )
