"""The EdgeJSON scores as a metric family: JSONExact, field F1 with its precision and
recall, schema compliance and valid JSON; the task `edgejson` scores itself with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Evaluation, Family
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
    source = "The EdgeJSON Benchmark (SLMBench, section 3.4; no arXiv id); docs/metrics.md"
    score_names = SCORE_NAMES
    schema_score = "schema_compliance"
    exact_score = "json_exact"

    check_formats: bool = False  # assert JSON Schema `format`s (default: annotations)

    def evaluate(self, output: ParseResult, expected: Any, schema: Any) -> Evaluation:
        checker = get_checker(
            schema, source="the example's schema", check_formats=self.check_formats
        )
        scored = edgejson_scores(output, expected, checker)
        return Evaluation(scored["scores"], {"schema_errors": scored["schema_errors"]})
