"""The Structure-BiEval family on raw outputs: the paper's syntax failures, and zero for
what does not parse (paper 001)."""

from __future__ import annotations

import pytest

from edgebench.metrics.structure import StructureFamily
from edgebench.scoring.parse import parse_json_output


def score_text(text: str, expected: object) -> dict[str, float | int]:
    return StructureFamily().score(parse_json_output(text), expected, {})


# papers/001 Appendix E, case 3: the comma after a closed object is missing.
MISSING_COMMA_TRUTH = {
    "company": {
        "cloudInfrastructure": {"aws": "12345", "gcp": "12345"},
        "employeeBenefits": {"health": "12345", "dental": "678"},
        "name": "Acme",
    }
}
MISSING_COMMA_OUTPUT = """{
  "company": {
    "cloudInfrastructure": { "aws": "12345", "gcp": "12345" }
    "employeeBenefits": { "health": "12345", "dental": "678" },
    "name": "Acme"
  }
}"""

# papers/001 Appendix E, case 2: no comma between list items, a key-value pair inside
# the array, and the array closed with a brace.
STATE_CONFUSION_TRUTH = {
    "project": "Apollo",
    "subtasks": [{"id": "101", "hours": "5"}, {"id": "102", "hours": "3"}],
    "taskId": "999",
}
STATE_CONFUSION_OUTPUT = """{
  "project": "Apollo",
  "subtasks": [
    { "id": "101", "hours": "5" }
    "taskId": "999"
  }
}"""


@pytest.mark.parametrize(
    ("text", "truth"),
    [(MISSING_COMMA_OUTPUT, MISSING_COMMA_TRUTH), (STATE_CONFUSION_OUTPUT, STATE_CONFUSION_TRUTH)],
)
def test_appendix_e_syntax_failures_score_zero(text: str, truth: object) -> None:
    scores = score_text(text, truth)
    # The document does not parse; the complete inner objects are fragments of it, never
    # the answer (docs/metrics.md, Shared rules), so nothing is valid JSON.
    assert scores == {"csa": 0.0, "nted": 0.0, "valid_json": 0}


def test_unparseable_output_scores_zero() -> None:
    assert score_text('{"company": {"name": "Acme"', MISSING_COMMA_TRUTH) == {
        "csa": 0.0,
        "nted": 0.0,
        "valid_json": 0,
    }
