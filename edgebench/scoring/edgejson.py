"""EdgeJSON metrics (the EdgeJSON benchmark, SLMBench section 3.4; definitions fixed in
docs/metrics.md).

All scores are per sample; aggregation (overall, by complexity, by schema) is done
elsewhere from the stored samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.scoring.equality import json_equal
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.schema import SchemaChecker

HIGHER_IS_BETTER: dict[str, bool] = {
    "valid_json": True,
    "json_exact": True,
    "field_precision": True,
    "field_recall": True,
    "field_f1": True,
    "schema_compliance": True,
}

# The scores in the order tables and summaries list them.
SCORE_NAMES = (
    "json_exact",
    "field_f1",
    "field_precision",
    "field_recall",
    "schema_compliance",
    "valid_json",
)

SCHEMA_ERRORS_KEPT = 3


@dataclass(frozen=True)
class FieldScores:
    precision: float
    recall: float
    f1: float


_NO_FIELDS = FieldScores(0.0, 0.0, 0.0)


def json_exact(pred: Any, expected: Any) -> int:
    """1 if the parsed output is the expected JSON value (JSON equality), else 0."""
    return int(json_equal(pred, expected))


def field_scores(pred: Any, expected: Any) -> FieldScores:
    """Precision, recall and F1 over top-level keys, a key counting when its values are equal.

    As in the paper, an empty object has precision (or recall) 0, not 1: two empty objects
    score 0 here though `json_exact` gives them 1.
    """
    if not isinstance(pred, dict) or not isinstance(expected, dict):
        return _NO_FIELDS
    correct = sum(
        1 for key in pred.keys() & expected.keys() if json_equal(pred[key], expected[key])
    )
    precision = correct / len(pred) if pred else 0.0
    recall = correct / len(expected) if expected else 0.0
    if precision + recall == 0:
        return _NO_FIELDS
    return FieldScores(precision, recall, 2 * precision * recall / (precision + recall))


def schema_compliance(parsed: ParseResult, checker: SchemaChecker) -> int:
    """1 if the output parsed and the value validates against the example's schema."""
    return int(parsed.ok and checker.is_valid(parsed.value))


def edgejson_scores(parsed: ParseResult, expected: Any, checker: SchemaChecker) -> dict[str, Any]:
    """The scores of a parsed output and the schema errors found on the way."""
    schema_errors = checker.errors(parsed.value, SCHEMA_ERRORS_KEPT) if parsed.ok else []
    fields = field_scores(parsed.value, expected)  # a failed parse has value None: all 0
    scores = {
        "valid_json": int(parsed.valid_json),
        "json_exact": json_exact(parsed.value, expected) if parsed.ok else 0,
        "field_precision": fields.precision,
        "field_recall": fields.recall,
        "field_f1": fields.f1,
        # schema_compliance() without validating a second time
        "schema_compliance": int(parsed.ok and not schema_errors),
    }
    return {"scores": scores, "schema_errors": schema_errors}
