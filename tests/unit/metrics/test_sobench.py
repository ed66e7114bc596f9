"""The SO-Bench family: per-sample field counts, and FMA aggregated micro over the run
(paper 004)."""

from __future__ import annotations

import pytest

from edgebench.metrics import get_family
from edgebench.scoring.parse import parse_json_output

TRUTH = {"name": "Riverside Services", "litres": 40.0, "lines": [{"sku": "A"}, {"sku": "B"}]}
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "litres": {"type": "number"}},
    "required": ["name"],
}


def test_family_scores_and_micro_aggregation() -> None:
    family = get_family("sobench")
    good = family.score(
        parse_json_output('{"name": "Riverside Services", "litres": 40}'), TRUTH, SCHEMA
    )
    bad = family.score(parse_json_output("not json"), TRUTH, SCHEMA)
    assert good["schema_valid"] == 1 and good["fields_exact"] == 2 and good["full_exact"] == 0
    assert bad == {
        "schema_valid": 0,
        "fields": 7,
        "fields_exact": 0,
        "fields_fuzzy": 0,
        "full_exact": 0,
        "full_fuzzy": 0,
    }
    summary = family.aggregate([good, bad])
    assert summary["fma_exact"] == pytest.approx(2 / 14)  # micro: all fields of the run
    assert summary["schema_validation_accuracy"] == 0.5
    assert summary["fsma_exact"] == 0.0
    assert family.aggregate([])["fma_exact"] is None
