"""The EdgeJSON scores (paper 003) as a metric family: JSONExact, field F1 with its
precision and recall, schema compliance and valid JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Family, Scores
from edgebench.scoring.edgejson import SCORE_NAMES, edgejson_scores
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.schema import get_checker


@dataclass(frozen=True)
class EdgeJSONFamily(Family):
    name = "edgejson"
    description = (
        "JSONExact (JSON equality), field precision/recall/F1 over top-level keys, schema "
        "compliance, valid JSON"
    )
    source = "papers/003 section 3.4; docs/metrics.md 'EdgeJSON'"
    score_names = SCORE_NAMES

    check_formats: bool = False  # assert JSON Schema `format`s (default: annotations)

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        checker = get_checker(
            schema, source="the example's schema", check_formats=self.check_formats
        )
        return edgejson_scores(output, expected, checker)["scores"]
