"""JSONSchemaBench's scores as a metric family: does the output parse, and does it
validate against its schema. There is no expected answer, so nothing else is scored.

The benchmark's validator (guidance-ai/jsonschemabench, validation.py) checks every
schema as Draft 2020-12 whatever its `$schema`, with `format` asserted; a schema that
is not a valid 2020-12 schema makes every output non-compliant. The family does the same
by default (`dialect="2020-12"`, `check_formats=True`); `dialect="declared"` follows each
schema's own `$schema` instead (Draft 7 when none). A schema the validator cannot use
(invalid, a `$ref` outside the file) scores 0 compliance with the reason in the details:
a result of that row, never a failed run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.errors import UserError
from edgebench.metrics.base import Evaluation, Family
from edgebench.scoring.edgejson import SCHEMA_ERRORS_KEPT, schema_compliance
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.schema import DIALECTS, get_checker

DECLARED = "declared"


@dataclass(frozen=True)
class SchemasFamily(Family):
    name = "schemas"
    description = (
        "valid JSON (the output parses) and schema compliance (it validates against the "
        "example's schema; Draft 2020-12 with formats asserted, as JSONSchemaBench)"
    )
    source = (
        "Generating Structured Outputs from Language Models: Benchmark and Studies "
        "(arXiv:2501.10868); docs/metrics.md"
    )
    score_names = ("schema_compliance", "valid_json")
    schema_score = "schema_compliance"

    dialect: str = "2020-12"  # "2020-12" or "7": every schema as that draft; or "declared"
    check_formats: bool = True  # assert JSON Schema `format`s, as the benchmark does

    def __post_init__(self) -> None:
        if self.dialect != DECLARED and self.dialect not in DIALECTS:
            known = ", ".join([*DIALECTS, DECLARED])
            raise UserError(f"--metric-param schemas.dialect: '{self.dialect}' (known: {known})")

    def evaluate(self, output: ParseResult, expected: Any, schema: Any) -> Evaluation:
        valid_json = int(output.valid_json)
        try:
            checker = get_checker(
                schema,
                source="the schema",
                check_formats=self.check_formats,
                dialect=None if self.dialect == DECLARED else self.dialect,
            )
        except UserError as exc:
            scores = {"schema_compliance": 0, "valid_json": valid_json}
            return Evaluation(scores, {"schema_errors": [], "schema_unusable": str(exc)})
        errors = checker.errors(output.value, SCHEMA_ERRORS_KEPT) if output.ok else []
        scores = {"schema_compliance": schema_compliance(output, checker), "valid_json": valid_json}
        return Evaluation(scores, {"schema_errors": errors})
