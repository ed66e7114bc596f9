"""The one scoring path: the raw output is parsed once, then every selected family
scores the parse. `edgebench run` and `edgebench score` both call `score_output`, so a
stored run scored again with the same code and parameters gives the same numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from edgebench.metrics import get_family
from edgebench.metrics.base import Family, Scores
from edgebench.runfolder.records import FamilyRecord, ParseStep
from edgebench.scoring.extract import LENIENT, Extraction


@dataclass(frozen=True)
class ScoredOutput:
    """What scoring adds to a sample record."""

    parse: ParseStep
    parsed: Any
    scores: dict[str, Scores]  # family -> its scores
    details: dict[str, dict[str, Any]]  # family -> what explains them (when it says)


def score_output(
    families: Sequence[Family],
    raw_output: str,
    expected: Any,
    schema: Any,
    extraction: Extraction = LENIENT,
) -> ScoredOutput:
    parsed = extraction.parse(raw_output)
    scores: dict[str, Scores] = {}
    details: dict[str, dict[str, Any]] = {}
    for family in families:
        evaluation = family.evaluate(parsed, expected, schema)
        scores[family.name] = evaluation.scores
        if evaluation.details:
            details[family.name] = evaluation.details
    step = ParseStep(ok=parsed.ok, path=parsed.path, error=parsed.error)
    return ScoredOutput(step, parsed.value, scores, details)


def describe_families(families: Sequence[Family], task_family: str) -> dict[str, FamilyRecord]:
    """The manifest's `families`: each family's definition and parameters, in order."""
    return {f.name: f.record("task" if f.name == task_family else "extra") for f in families}


def families_of(records: Mapping[str, FamilyRecord]) -> list[Family]:
    """The families a run recorded, with the parameters it ran with, in order."""
    return [get_family(name, record.parameters) for name, record in records.items()]
