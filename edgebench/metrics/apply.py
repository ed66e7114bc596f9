"""Scoring a sample with every selected family, and summarising the families of a run.

`score_sample` is what both `edgebench run` and `edgebench score` call, so a stored run
re-scored with the same code and parameters gives the same numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from edgebench.metrics import Family, get_family, task_family
from edgebench.scoring.parse import parse_json_output
from edgebench.tasks.base import Example, Task

SCORING_KEYS = ("parse", "parsed", "scores", "schema_errors", "families")


def score_sample(
    task: Task, families: Sequence[Family], raw_output: str, example: Example
) -> dict[str, Any]:
    """The task's own record (parse, parsed value, `scores`) plus, under `families`, the
    scores of every other selected family."""
    scored = task.score(raw_output, example)
    own = task_family(task)
    extra = [f for f in families if f.name != own]
    if extra:
        parsed = parse_json_output(raw_output)
        scored["families"] = {
            f.name: f.score(parsed, example.expected, example.schema) for f in extra
        }
    return scored


def describe_families(families: Sequence[Family], task: Task) -> dict[str, Any]:
    """The manifest's `families`: each family's definition and parameters, in order."""
    own = task_family(task)
    return {
        f.name: {"role": "task" if f.name == own else "extra", **f.describe()} for f in families
    }


def _own_family(described: dict[str, Any]) -> str | None:
    return next((name for name, d in described.items() if d.get("role") == "task"), None)


def sample_family_scores(sample: dict[str, Any], name: str, own: str | None) -> dict[str, Any]:
    if name == own:
        return sample.get("scores") or {}
    return (sample.get("families") or {}).get(name) or {}


def task_score_names(manifest: dict[str, Any]) -> tuple[str, ...] | None:
    """The per-sample score names of the run's task family; None for a run made before
    families were recorded."""
    described = manifest.get("families") or {}
    own = _own_family(described)
    return tuple(described[own]["scores"]) if own else None


def summarize_families(
    manifest: dict[str, Any], samples: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Per family: its direction, parameters, the overall figures and one table per
    sample group (by_complexity, by_schema, ...). None when the manifest lists none."""
    described = manifest.get("families")
    if not described:
        return None
    own = _own_family(described)
    result: dict[str, Any] = {}
    for name, info in described.items():
        family = get_family(name, info.get("parameters"))
        rows = [sample_family_scores(s, name, own) for s in samples]
        groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        for sample, row in zip(samples, rows, strict=True):
            for key, value in (sample.get("groups") or {}).items():
                groups[key][value].append(row)
        result[name] = {
            "role": info.get("role"),
            "higher_is_better": family.higher_is_better,
            "parameters": family.parameters(),
            "overall": family.aggregate(rows),
            **{
                f"by_{key}": {value: family.aggregate(items) for value, items in sorted(g.items())}
                for key, g in sorted(groups.items())
            },
        }
    return result
