"""STED similarity and the consistency score (STED and Consistency Scoring, arXiv:2512.23712,
sections 3.2-3.7; fixed in docs/metrics.md).

`sted(a, b)` is in [0, 1]: 1 for the same JSON up to key order and key spelling style,
0 for values of different node kinds. Objects and arrays are compared by an optimal
assignment of their children (Hungarian algorithm, scipy), so order never matters:

    cost(i, j) = 1 - key_sim(i, j) * sim(child_i, child_j)      (key_sim = 1 in arrays)
    C = assignment cost + 1 per unmatched child
    sim = max(0, 1 - (C + size_penalty * |n1 - n2|) / max(n1, n2))

Three variants, the paper's three evaluation modes (section 4.2):
- `hybrid` (the STED of docs/metrics.md): keys, nesting and values;
- `structural`: keys, nesting and leaf *types*; values are ignored;
- `semantic`: the leaf values alone, matched as a bag wherever they sit; keys and
  nesting are ignored.
The paper does not define the last two precisely; this reading is edgebench's and is
documented in docs/metric-families.md.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from edgebench.scoring.equality import json_kind
from edgebench.scoring.ir import MAX_SCORED_DEPTH, depth, normalise_value
from edgebench.scoring.similarity import normalise_key, text_similarity

Mode = Literal["hybrid", "structural", "semantic"]
MODES: tuple[Mode, ...] = ("hybrid", "structural", "semantic")
SIGMA_MAX = 0.5  # the largest standard deviation of values in [0, 1]


@dataclass(frozen=True)
class StedParams:
    """The named choices of STED and the consistency score (recorded in manifests)."""

    type_coercion_weight: float = 0.9  # "123" vs 123, "true" vs true
    size_penalty: float = 0.1  # lambda: per child more on one side
    steepness: float = 2.0  # k in mean * exp(-k * sigma / sigma_max)
    unparseable_similarity: float = 0.0  # an output that did not parse, against any other


DEFAULT_PARAMS = StedParams()


def _node_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "primitive"


def primitive_similarity(a: Any, b: Any, params: StedParams = DEFAULT_PARAMS) -> float:
    """Numbers and booleans exact (1 == 1.0, true != 1), strings by text similarity, and a
    value equal after type coercion ("30" vs 30) scores `type_coercion_weight`."""
    kind_a, kind_b = json_kind(a), json_kind(b)
    if kind_a == kind_b:
        if kind_a == "string":
            return text_similarity(a, b)
        return 1.0 if a == b else 0.0
    if normalise_value(a) == normalise_value(b):
        return params.type_coercion_weight
    return 0.0


def _assignment_similarity(cost: np.ndarray, size_penalty: float) -> float:
    """1 - (optimal assignment cost + unmatched children + size penalty) / larger size."""
    n1, n2 = cost.shape
    if n1 == 1 and n2 == 1:
        matched = float(cost[0, 0])
    else:
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        matched = float(cost[rows, cols].sum())
    unmatched = abs(n1 - n2)
    return max(0.0, 1.0 - (matched + unmatched + size_penalty * unmatched) / max(n1, n2))


def _tree_similarity(a: Any, b: Any, params: StedParams, structural: bool) -> float:
    kind = _node_kind(a)
    if kind != _node_kind(b):
        return 0.0
    if kind == "primitive":
        if structural:
            return 1.0 if json_kind(a) == json_kind(b) else 0.0
        return primitive_similarity(a, b, params)
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0  # every child unmatched: the formula gives at most 0
    if kind == "object":
        keys_a = [normalise_key(k) for k in a]
        keys_b = [normalise_key(k) for k in b]
        values_a, values_b = list(a.values()), list(b.values())
    else:
        keys_a = keys_b = []
        values_a, values_b = a, b
    cost = np.ones((len(values_a), len(values_b)))
    for i, child_a in enumerate(values_a):
        for j, child_b in enumerate(values_b):
            key_sim = text_similarity(keys_a[i], keys_b[j]) if keys_a else 1.0
            if key_sim > 0.0:
                cost[i, j] = 1.0 - key_sim * _tree_similarity(child_a, child_b, params, structural)
    return _assignment_similarity(cost, params.size_penalty)


def _leaves(value: Any) -> list[Any]:
    found: list[Any] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        else:
            found.append(item)
    return found


def _leaf_bag_similarity(a: Any, b: Any, params: StedParams) -> float:
    leaves_a, leaves_b = _leaves(a), _leaves(b)
    if not leaves_a and not leaves_b:
        return 1.0
    if not leaves_a or not leaves_b:
        return 0.0
    cost = np.array(
        [[1.0 - primitive_similarity(x, y, params) for y in leaves_b] for x in leaves_a]
    )
    return _assignment_similarity(cost, params.size_penalty)


def sted(a: Any, b: Any, params: StedParams = DEFAULT_PARAMS, mode: Mode = "hybrid") -> float:
    """STED similarity of two parsed JSON values (symmetric, in [0, 1]).

    Values nested deeper than MAX_SCORED_DEPTH score 0 against anything (the comparison
    recurses once per level)."""
    if mode == "semantic":
        return _leaf_bag_similarity(a, b, params)
    if depth(a) > MAX_SCORED_DEPTH or depth(b) > MAX_SCORED_DEPTH:
        return 0.0
    return _tree_similarity(a, b, params, structural=mode == "structural")


def pairwise_similarities(
    outputs: Sequence[tuple[bool, Any]],
    params: StedParams = DEFAULT_PARAMS,
    mode: Mode = "hybrid",
) -> list[float]:
    """STED of every pair i < j of (parsed ok, value) outputs; a pair with an output that
    did not parse scores `unparseable_similarity`."""
    sims = []
    for i in range(len(outputs)):
        for j in range(i + 1, len(outputs)):
            (ok_a, a), (ok_b, b) = outputs[i], outputs[j]
            sims.append(
                sted(a, b, params, mode) if ok_a and ok_b else params.unparseable_similarity
            )
    return sims


def consistency_score(similarities: Sequence[float], steepness: float = 2.0) -> float | None:
    """mean(s) * exp(-k * sigma / sigma_max), sigma the population standard deviation of
    the pairwise similarities (0 with fewer than two pairs); None without pairs."""
    if not similarities:
        return None
    sigma = statistics.pstdev(similarities) if len(similarities) >= 2 else 0.0
    return statistics.fmean(similarities) * math.exp(-steepness * sigma / SIGMA_MAX)
