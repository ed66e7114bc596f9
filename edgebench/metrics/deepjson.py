"""The DeepJSONEval scores (paper 000) as a metric family: Syntax, hierarchical
Key-matching, Strict, and valid JSON. The `deepjson` task scores itself with it; on
other tasks (`--metrics deepjson`) it gives partial credit for nested answers where
EdgeJSON's JSONExact gives none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Family, Scores
from edgebench.scoring.deepjson import SCORE_NAMES, deepjson_scores
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.schema import get_checker


@dataclass(frozen=True)
class DeepJSONFamily(Family):
    name = "deepjson"
    description = (
        "Syntax (parses and validates against the schema), Key-matching (recursive key "
        "overlap, extra keys penalised, Jaccard for primitive lists), Strict (JSON "
        "equality); all three 0 when the syntax gate fails; valid JSON"
    )
    source = "papers/000 Appendix A; docs/metrics.md 'DeepJSONEval'"
    score_names = SCORE_NAMES

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        checker = get_checker(schema, source="the example's schema")
        return deepjson_scores(output, expected, checker)["scores"]
