"""Structure-BiEval metrics (arXiv:2601.19923, section 3.4; fixed in docs/metrics.md).

- NTED = 1 - TED(T_gt, T_pred) / max(|T_gt|, |T_pred|) on the IR trees, unit costs for
  insert, delete and rename; leaves are labelled by JSON type only, so NTED measures
  structure and not content.
- CSA = Jaccard similarity of the two sets of leaf triples (path, key, normalised value).

Both take parsed JSON values; an output that did not parse scores 0 on both (the caller
decides that, see `edgebench.metrics.structure`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from edgebench.scoring.ir import (
    MAX_SCORED_DEPTH,
    Node,
    depth,
    leaf_triples,
    preorder,
    signature,
    to_tree,
)


def csa(pred: Any, expected: Any) -> float:
    """Content Semantic Accuracy: |A ∩ B| / |A ∪ B| over leaf triples."""
    truth, found = leaf_triples(expected), leaf_triples(pred)
    union = len(truth | found)
    return len(truth & found) / union if union else 1.0


# TED of a pair of IR trees by their signatures; cleared when full (memory stays bounded).
_TED_MEMO: dict[tuple[Any, Any], int] = {}
_TED_MEMO_LIMIT = 4096


def tree_edit_distance(a: Node, b: Node) -> int:
    """Unit-cost tree edit distance (APTED, Pawlik and Augsten) between two IR trees.

    TED depends only on the two trees, which their signatures identify, so equal trees
    cost nothing and a pair of structures seen before (outputs that differ from the
    answer only in their values) is computed once."""
    key = (signature(a), signature(b))
    if key[0] == key[1]:
        return 0
    distance = _TED_MEMO.get(key)
    if distance is None:
        distance = _apted(a, b)
        if len(_TED_MEMO) >= _TED_MEMO_LIMIT:
            _TED_MEMO.clear()
        _TED_MEMO[key] = distance
    return distance


def _apted(a: Node, b: Node) -> int:
    from apted import APTED  # imported only when a structure metric is used

    return int(APTED(a, b, _unit_cost_config()).compute_edit_distance())


@lru_cache(maxsize=1)
def _unit_cost_config() -> Any:
    from apted import Config

    class UnitCost(Config):  # type: ignore[misc]
        """Insert, delete and rename cost 1; nodes are IR `Node`s."""

        def rename(self, node1: Node, node2: Node) -> int:
            return int(node1.label != node2.label)

        def children(self, node: Node) -> list[Node]:
            return node.children

    return UnitCost()


def nted(pred: Any, expected: Any) -> float:
    """Normalised tree edit distance as a similarity: 1 for identical structure.

    A value nested deeper than MAX_SCORED_DEPTH scores 0: the tree edit distance package
    recurses per level, and such an output is nothing like an extraction answer."""
    if depth(pred) > MAX_SCORED_DEPTH or depth(expected) > MAX_SCORED_DEPTH:
        return 0.0
    truth, found = to_tree(expected), to_tree(pred)
    size = max(len(preorder(truth)), len(preorder(found)))
    return 1.0 - tree_edit_distance(truth, found) / size
