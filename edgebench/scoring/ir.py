"""The intermediate representation of Structure-BiEval (arXiv:2601.19923, section 3.1 and
Appendix A; fixed in docs/metrics.md): a JSON value as an ordered labelled tree, and its
leaves as (path, key, normalised value) triples.

Every walk here is iterative: a parsed output can nest as deeply as the parser allows,
and scoring it must not overflow the stack.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from edgebench.scoring.equality import json_kind

# Node labels. KEY nodes carry the key name; VALUE leaves only their JSON type, so the
# tree describes structure, not content (NTED).
DICT = ("DICT",)
LIST = ("LIST",)

Step = str | int  # an object key or a list index
Leaf = tuple[tuple[Step, ...], Step | None, tuple[Any, ...]]

# Tree comparisons that recurse per level (APTED, STED) give 0 for values nested deeper
# than this; no extraction answer comes near it, and Python's stack stays safe.
MAX_SCORED_DEPTH = 200

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_MAX_INT_TEXT = 30  # longer integer strings are compared as floats


@dataclass
class Node:
    """One IR node: `label` is DICT, LIST, ("KEY", name) or ("VALUE", json type)."""

    label: tuple[str, ...]
    children: list[Node] = field(default_factory=list)


def to_tree(value: Any) -> Node:
    """The IR tree of a JSON value. Object entries are sorted by key, so key order in the
    text never matters; lists keep their order."""
    holder: list[Any] = [None]
    # (value, the list its node goes into, at which position)
    pending: list[tuple[Any, list[Any], int]] = [(value, holder, 0)]
    while pending:
        item, slots, position = pending.pop()
        kind = json_kind(item)
        if kind == "object":
            node = Node(DICT)
            for key in sorted(item):
                key_node = Node(("KEY", key), [None])
                node.children.append(key_node)
                pending.append((item[key], key_node.children, 0))
        elif kind == "array":
            node = Node(LIST, [None] * len(item))
            pending.extend((element, node.children, i) for i, element in enumerate(item))
        else:
            node = Node(("VALUE", kind))
        slots[position] = node
    return holder[0]


def preorder(node: Node) -> list[Node]:
    """The nodes of a tree in preorder."""
    nodes: list[Node] = []
    pending = [node]
    while pending:
        current = pending.pop()
        nodes.append(current)
        pending.extend(reversed(current.children))
    return nodes


def signature(node: Node) -> tuple[tuple[Any, ...], ...]:
    """Equal for two trees exactly when they are the same labelled ordered tree: the
    preorder sequence of (label, number of children) determines the tree."""
    return tuple((n.label, len(n.children)) for n in preorder(node))


def depth(value: Any) -> int:
    """Nesting depth of a JSON value: a primitive is 0, {"a": 1} is 1, {"a": [1]} is 2."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            children = item.values() if isinstance(item, dict) else item
            pending.extend((v, level + 1) for v in children)
            deepest = max(deepest, level + 1)
    return deepest


def normalise_value(value: Any) -> tuple[Any, ...]:
    """The value of a CSA triple: `"30"`, `30` and `30.0` are equal, booleans compare
    lower-cased (`"True"` equals `true`), strings are stripped."""
    if isinstance(value, bool):
        return ("bool", value)
    if value is None:
        return ("null",)
    if isinstance(value, (int, float)):
        return ("num", value)  # 30 == 30.0 and both hash alike
    if isinstance(value, str):
        text = value.strip()
        lowered = text.lower()
        if lowered in ("true", "false"):
            return ("bool", lowered == "true")
        number = _as_number(text)
        if number is not None:
            return ("num", number)
        return ("str", text)
    raise TypeError(f"not a JSON primitive: {type(value).__name__}")


def _as_number(text: str) -> int | float | None:
    if not _NUMBER.fullmatch(text):
        return None
    if text.lstrip("-").isdigit() and len(text) <= _MAX_INT_TEXT:
        return int(text)
    number = float(text)
    return number if math.isfinite(number) else None


def leaf_triples(value: Any) -> set[Leaf]:
    """(path to the parent, key or index, normalised value) for every leaf of the tree.

    Empty objects and lists are leaves of the IR tree too, so `{"tags": []}` and
    `{"tags": {}}` differ and `{}` equals `{}`."""
    triples: set[Leaf] = set()
    pending: list[tuple[Any, tuple[Step, ...]]] = [(value, ())]
    while pending:
        item, path = pending.pop()
        if isinstance(item, dict) and item:
            pending.extend((v, (*path, k)) for k, v in item.items())
        elif isinstance(item, list) and item:
            pending.extend((v, (*path, i)) for i, v in enumerate(item))
        else:
            if isinstance(item, dict):
                normal: tuple[Any, ...] = ("empty_object",)
            elif isinstance(item, list):
                normal = ("empty_array",)
            else:
                normal = normalise_value(item)
            key = path[-1] if path else None
            triples.add((path[:-1], key, normal))
    return triples
