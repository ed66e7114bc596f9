"""SO-Bench (arXiv:2511.21750) as a metric family: schema validation accuracy, field matching
accuracy (FMA, micro over the run) and full structure matching accuracy (FSMA), each
with exact and fuzzy matching."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Family, Scores
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.schema import get_checker
from edgebench.scoring.sobench import FuzzyParams, match_fields, no_match


@dataclass(frozen=True)
class SOBenchFamily(Family):
    name = "sobench"
    description = (
        "schema validation accuracy; FMA = matched ground-truth fields / all fields "
        "(micro); FSMA = share of outputs whose every field matches; exact and fuzzy"
    )
    source = (
        "SO-Bench: A Structural Output Evaluation of Multimodal LLMs (arXiv:2511.21750), "
        "section 3.5; docs/metrics.md"
    )
    score_names = (
        "schema_valid",
        "fields",
        "fields_exact",
        "fields_fuzzy",
        "full_exact",
        "full_fuzzy",
    )

    schema_score = "schema_valid"
    exact_score = "full_exact"

    fuzzy_string_threshold: float = 0.8
    fuzzy_number_tolerance: float = 0.05
    check_formats: bool = False

    @property
    def summary_names(self) -> tuple[str, ...]:
        return ("schema_validation_accuracy", "fma_exact", "fma_fuzzy", "fsma_exact", "fsma_fuzzy")

    def interval_inputs(self) -> dict[str, tuple[str, str | None]]:
        return {
            "schema_validation_accuracy": ("schema_valid", None),
            "fma_exact": ("fields_exact", "fields"),
            "fma_fuzzy": ("fields_fuzzy", "fields"),
            "fsma_exact": ("full_exact", None),
            "fsma_fuzzy": ("full_fuzzy", None),
        }

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        if not output.ok:
            missed = no_match(expected)
            return {
                "schema_valid": 0,
                "fields": missed.fields,
                "fields_exact": 0,
                "fields_fuzzy": 0,
                "full_exact": 0,
                "full_fuzzy": 0,
            }
        checker = get_checker(
            schema, source="the example's schema", check_formats=self.check_formats
        )
        fuzzy = FuzzyParams(self.fuzzy_string_threshold, self.fuzzy_number_tolerance)
        exact_match = match_fields(output.value, expected)
        fuzzy_match = match_fields(output.value, expected, fuzzy)
        return {
            "schema_valid": int(checker.is_valid(output.value)),
            "fields": exact_match.fields,
            "fields_exact": exact_match.matched,
            "fields_fuzzy": fuzzy_match.matched,
            "full_exact": int(exact_match.full),
            "full_fuzzy": int(fuzzy_match.full),
        }

    def aggregate(self, samples: Sequence[Scores]) -> dict[str, Any]:
        n = len(samples)
        fields = sum(int(s.get("fields", 0)) for s in samples)

        def share(name: str) -> float | None:  # None: no scored sample, no value
            return sum(float(s.get(name, 0)) for s in samples) / n if n else None

        def micro(name: str) -> float | None:
            return sum(int(s.get(name, 0)) for s in samples) / fields if fields else None

        return {
            "n": n,
            "schema_validation_accuracy": share("schema_valid"),
            "fma_exact": micro("fields_exact"),
            "fma_fuzzy": micro("fields_fuzzy"),
            "fsma_exact": share("full_exact"),
            "fsma_fuzzy": share("full_fuzzy"),
            "fields": fields,
        }
