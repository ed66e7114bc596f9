"""Algorithm 1 of DeepJSONEval (arXiv:2509.25922): real-time path-value updating beam
exploration for constrained schema subtree construction (eqs. 1-7).

From a root, the subtree S grows by candidate paths p = (u0, ..., ul) that start at the
frontier F(S) (children of S outside S) and follow tree edges down. Each round scores
every candidate with

    Val(p | S) = sum_i gamma^i * Delta(u_i | S + u_0..u_{i-1})             (6)
                 + lambda_d * R_depth(S+p) + lambda_n * R_size(S+p) - eta * Penalty(p | S)

where Delta(u | S) = alpha * max_{v in S} Assoc(u, v) (eqs. 1-2, re-evaluated as the path
adds nodes: the "real-time" update), R_depth and R_size are the soft window rewards of eqs.
3-4 and Penalty counts a start outside the frontier and non-edges (eq. 5). The top_k paths
are added in order when S + p stays feasible (eq. 7: depth <= d_max, size <= n_max).

Where edgebench has to choose (each a parameter below, documented in docs/architecture.md):
- Paths end at a leaf: a path ending at an object would leave an object property with no
  properties of its own in the schema.
- Path length: the paper bounds it by L_max = min(d_max - d(S), n_max - |S|); edgebench
  bounds each path by the levels left below its own start (d_max - level(u0) + 1), the
  same bound for a path that starts below the deepest node. With a one-level depth window
  (d_min = d_max, one target depth per example) the paper's loop would stop as soon as
  the target depth is reached, leaving a schema of a few parallel chains; edgebench keeps
  growing breadth while |S| < n_min (loop: while |S| < n_max and (d(S) < d_max or
  |S| < n_min)).
- Variety: the paper's procedure is deterministic, one subtree per root. To draw many
  schemas per domain and depth, Val gets seeded Gaussian noise (`noise`, standard
  deviation) and the generator varies root, top_k and n_min per example.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

from edgebench.datagen.deepjson.association import Association
from edgebench.datagen.deepjson.tree import OBJECT, Tree


@dataclass(frozen=True)
class SubtreeParams:
    d_min: int
    d_max: int
    n_min: int
    n_max: int
    top_k: int = 3
    alpha: float = 1.0  # eq. 2: Delta = alpha * Corr
    gamma: float = 0.9  # eq. 6: discount along the path
    lambda_depth: float = 2.0
    lambda_size: float = 1.0
    eta: float = 10.0  # eq. 6: weight of the structural penalty
    epsilon: float = 1.0  # eqs. 3-4: keeps a one-value window's slope at 1 per level
    noise: float = 0.0  # edgebench: standard deviation of seeded noise added to Val


@dataclass(frozen=True)
class Subtree:
    root: str
    nodes: tuple[str, ...]  # the root first, then in the order they were added
    depth: int
    rounds: int


def subtree_depth(tree: Tree, root: str, nodes: set[str] | tuple[str, ...]) -> int:
    """Levels of S: the root is level 1 (the JSON root object)."""
    return max(tree.level[n] for n in nodes) - tree.level[root] + 1


def frontier(tree: Tree, nodes: set[str]) -> list[str]:
    """F(S): nodes outside S with a parent in S, in tree order (deterministic)."""
    return [child for node in tree.nodes if node in nodes for child in tree.children[node]
            if child not in nodes]  # fmt: skip


def candidate_paths(
    tree: Tree, root: str, nodes: set[str], params: SubtreeParams
) -> Iterator[tuple[str, ...]]:
    """Downward chains from each frontier node to a leaf, at most as long as the levels
    left below their start and the size budget allow."""
    room = params.n_max - len(nodes)
    for start in frontier(tree, nodes):
        levels_left = params.d_max - (tree.level[start] - tree.level[root])
        limit = min(levels_left, room)
        pending: list[tuple[str, ...]] = [(start,)]
        while pending:
            path = pending.pop()
            if len(path) > limit:
                continue
            kids = tree.children[path[-1]]
            if not kids:
                yield path
            pending.extend((*path, kid) for kid in reversed(kids))


def _window(value: int, low: int, high: int, epsilon: float) -> float:
    """Eqs. 3-4: 1 inside [low, high], falling linearly outside."""
    return 1.0 - abs(min(max(value, low), high) - value) / (high - low + epsilon)


def path_value(
    tree: Tree,
    root: str,
    nodes: set[str],
    path: tuple[str, ...],
    assoc: Association,
    params: SubtreeParams,
) -> float:
    """Val(p | S), eq. 6; -inf when S + p is infeasible (eq. 7)."""
    grown = set(nodes)
    gain = 0.0
    for i, node in enumerate(path):
        corr = max(assoc(node, other) for other in grown)  # eq. 1, with the path so far
        gain += params.gamma**i * params.alpha * corr  # eq. 2
        grown.add(node)
    depth = subtree_depth(tree, root, grown)
    size = len(grown)
    if depth > params.d_max or size > params.n_max:
        return -math.inf
    edges_missing = sum(1 for a, b in itertools.pairwise(path) if tree.parent[b] != a)
    penalty = (tree.parent[path[0]] not in nodes) + edges_missing  # eq. 5
    return (
        gain
        + params.lambda_depth * _window(depth, params.d_min, params.d_max, params.epsilon)
        + params.lambda_size * _window(size, params.n_min, params.n_max, params.epsilon)
        - params.eta * penalty
    )


def grow(
    tree: Tree,
    root: str,
    params: SubtreeParams,
    assoc: Association,
    rng: random.Random | None = None,
) -> Subtree | None:
    """Algorithm 1 for one root: the subtree, or None when it misses the windows."""
    order = [root]
    nodes = {root}
    rounds = 0
    while len(nodes) < params.n_max and (
        subtree_depth(tree, root, nodes) < params.d_max or len(nodes) < params.n_min
    ):
        rounds += 1
        scored = []
        for path in candidate_paths(tree, root, nodes, params):
            value = path_value(tree, root, nodes, path, assoc, params)
            if value == -math.inf:
                continue
            if rng is not None and params.noise:
                value += rng.gauss(0.0, params.noise)
            scored.append((value, path))
        scored.sort(key=lambda item: -item[0])  # stable: ties keep tree order
        beam = [path for _, path in scored[: params.top_k]]
        if not beam:
            break
        added = False
        for path in beam:
            new = [node for node in path if node not in nodes]
            grown = nodes | set(new)
            feasible = (
                subtree_depth(tree, root, grown) <= params.d_max and len(grown) <= params.n_max
            )
            if new and feasible:
                nodes = grown
                order += new
                added = True
        if not added:
            break
    depth = subtree_depth(tree, root, nodes)
    if params.d_min <= depth <= params.d_max and params.n_min <= len(nodes) <= params.n_max:
        return Subtree(root, tuple(order), depth, rounds)
    return None


def extract_subtrees(
    tree: Tree, params: SubtreeParams, assoc: Association | None = None
) -> list[Subtree]:
    """Algorithm 1 as the paper states it: one attempt per root r in V, keeping the
    subtrees that meet both windows."""
    assoc = assoc or Association(tree)
    found = []
    for root in tree.nodes:
        if tree.nodes[root].kind != OBJECT:  # a JSON root is an object
            continue
        subtree = grow(tree, root, params, assoc)
        if subtree is not None:
            found.append(subtree)
    return found
