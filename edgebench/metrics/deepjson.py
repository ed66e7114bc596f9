"""The DeepJSONEval scores as a metric family: Syntax, hierarchical Key-matching, Strict,
and valid JSON, with key matching per leaf element type (the paper's Figure 8). The
`deepjson` task scores itself with it; on other tasks (`--metrics deepjson`) it gives
partial credit for nested answers where EdgeJSON's JSONExact gives none."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Evaluation, Family, Figures, Scored
from edgebench.scoring.deepjson import (
    ELEMENT_TYPES,
    SCORE_NAMES,
    deepjson_scores,
    element_type_scores,
)
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
    source = (
        "DeepJSONEval: Benchmarking Complex Nested JSON Data Mining for Large Language "
        "Models (arXiv:2509.25922), Appendix A; docs/metrics.md"
    )
    score_names = SCORE_NAMES
    schema_score = "syntax"
    exact_score = "strict"

    def evaluate(self, output: ParseResult, expected: Any, schema: Any) -> Evaluation:
        checker = get_checker(schema, source="the example's schema")
        scored = deepjson_scores(output, expected, checker)
        gate = bool(scored["scores"]["syntax"])
        details = {
            "schema_errors": scored["schema_errors"],
            "element_scores": element_type_scores(expected, output.value, schema, gate=gate),
        }
        return Evaluation(scored["scores"], details)

    def breakdowns(self, samples: Sequence[Scored]) -> dict[str, dict[str, Figures]]:
        """Key matching per leaf element type, pooled over fields: the sum of every
        field's score over the number of fields of that type; `n` counts the examples
        that have the type."""
        fields: Counter[str] = Counter()
        examples: Counter[str] = Counter()
        total: defaultdict[str, float] = defaultdict(float)
        for sample in samples:
            for kind, score in (sample.details.get("element_scores") or {}).items():
                examples[kind] += 1
                fields[kind] += score["fields"]
                total[kind] += score["key_matching"] * score["fields"]
        if not fields:
            return {}
        order = {kind: i for i, kind in enumerate(ELEMENT_TYPES)}
        ranked = sorted(fields.items(), key=lambda kv: order.get(kv[0], len(order)))
        table = {
            kind: {"n": examples[kind], "fields": count, "key_matching": total[kind] / count}
            for kind, count in ranked
        }
        return {"element_type": table}
