"""STED (arXiv:2512.23712) as a metric family: the similarity of each output to the expected
answer, in the hybrid, structural and semantic variants. The same parameters drive
`edgebench consistency`, which compares outputs with each other instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Family, Scores
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.sted import StedParams, sted


@dataclass(frozen=True)
class StedFamily(Family):
    name = "sted"
    description = (
        "STED similarity to the expected answer: Hungarian matching of object keys "
        "(normalised spelling) and array elements; hybrid, structural-only and "
        "semantic-only variants"
    )
    source = (
        "STED and Consistency Scoring: A Framework for Evaluating LLM Structured Output "
        "Reliability (arXiv:2512.23712), sections 3.2-3.7; docs/metrics.md"
    )
    score_names = ("sted", "sted_structural", "sted_semantic")

    type_coercion_weight: float = 0.9
    size_penalty: float = 0.1
    steepness: float = 2.0
    unparseable_similarity: float = 0.0

    @property
    def params(self) -> StedParams:
        return StedParams(**self.parameters())

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        params = self.params
        if not output.ok:
            value = params.unparseable_similarity
            return dict.fromkeys(self.score_names, value)
        return {
            "sted": sted(output.value, expected, params, "hybrid"),
            "sted_structural": sted(output.value, expected, params, "structural"),
            "sted_semantic": sted(output.value, expected, params, "semantic"),
        }
