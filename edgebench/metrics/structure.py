"""Structure-BiEval (arXiv:2601.19923) as a metric family: CSA (content) and NTED (structure)
on the IR tree, and the share of outputs that parse (the paper's hard-invalid outputs
score 0 on both)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.metrics.base import Family, Scores
from edgebench.scoring.parse import ParseResult
from edgebench.scoring.structure import csa, nted


@dataclass(frozen=True)
class StructureFamily(Family):
    name = "structure"
    description = (
        "CSA: Jaccard of leaf triples (path, key, normalised value); NTED: 1 - unit-cost "
        "tree edit distance (APTED) / larger IR tree, leaves labelled by type; valid JSON"
    )
    source = (
        "Structure-BiEval: A Self-Supervised, Dual-Track Framework for Decoupling Structure "
        "and Content in LLM Evaluation (arXiv:2601.19923), section 3.4; docs/metrics.md"
    )
    score_names = ("csa", "nted", "valid_json")

    def score(self, output: ParseResult, expected: Any, schema: Any) -> Scores:
        if not output.ok:
            return {"csa": 0.0, "nted": 0.0, "valid_json": int(output.valid_json)}
        return {
            "csa": csa(output.value, expected),
            "nted": nted(output.value, expected),
            "valid_json": int(output.valid_json),
        }
