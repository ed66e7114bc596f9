"""The Pareto front of a sweep: which (variant, constraint mode) points no other point
beats on every objective at once. Pure: points in, the dominating points of each out.

Objectives: accuracy (higher is better), file size (lower), decode tokens/s (higher),
peak RSS (lower). Point `a` dominates `b` when `a` is at least as good on every
objective and strictly better on one; points equal on all of them dominate neither, so
ties stay on the front together. Equal means equal up to floating-point noise (a relative
1e-9: tokens/s derived from the same timestamps by different sums), never a tolerance
for measurement noise: the tables show the intervals for that. A missing figure counts
as the worst value, so a point is never kept on the front by a figure nobody measured."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

REL_TOL = 1e-9


@dataclass(frozen=True)
class Objective:
    name: str
    higher_is_better: bool


OBJECTIVES: tuple[Objective, ...] = (
    Objective("accuracy", True),
    Objective("size_mb", False),
    Objective("decode_tok_s", True),
    Objective("peak_rss_mb", False),
)


@dataclass(frozen=True)
class Point:
    key: str  # what names the point: "<model> · <mode>"
    values: dict[str, float | None]  # objective name -> figure (None: not measured)


def _score(point: Point, objective: Objective) -> float:
    """The figure turned so that larger is better; a missing one is the worst."""
    value = point.values.get(objective.name)
    if value is None or math.isnan(value):
        return -math.inf
    return value if objective.higher_is_better else -value


def dominates(a: Point, b: Point, objectives: Sequence[Objective] = OBJECTIVES) -> bool:
    """`a` is at least as good as `b` on every objective and better on one."""
    pairs = [(_score(a, o), _score(b, o)) for o in objectives]
    same = [x == y or math.isclose(x, y, rel_tol=REL_TOL) for x, y in pairs]
    return all(s or x > y for s, (x, y) in zip(same, pairs, strict=True)) and not all(same)


def dominated_by(
    points: Sequence[Point], objectives: Sequence[Objective] = OBJECTIVES
) -> dict[str, list[str]]:
    """Each point's key -> the keys of the points that dominate it; an empty list is a
    point on the front."""
    return {
        b.key: [a.key for a in points if a is not b and dominates(a, b, objectives)] for b in points
    }


def front(points: Sequence[Point], objectives: Sequence[Objective] = OBJECTIVES) -> list[str]:
    """The keys on the front, in the order given."""
    return [key for key, by in dominated_by(points, objectives).items() if not by]
