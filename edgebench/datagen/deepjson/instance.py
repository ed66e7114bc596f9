"""A subtree as a JSON Schema, and a ground-truth object that is valid against it."""

from __future__ import annotations

import random
from typing import Any

from edgebench.datagen.deepjson.subtree import Subtree
from edgebench.datagen.deepjson.tree import (
    BOOLEAN,
    ENUM,
    NUMBER,
    NUMBER_LIST,
    OBJECT,
    OBJECT_LIST,
    STRING,
    STRING_LIST,
    Prop,
    Tree,
)


def kept_children(tree: Tree, subtree: Subtree, node: str) -> list[str]:
    """The children of `node` that the subtree keeps, in the domain tree's order."""
    keep = set(subtree.nodes)
    return [child for child in tree.children[node] if child in keep]


def _object_schema(tree: Tree, subtree: Subtree, node: str) -> dict[str, Any]:
    children = kept_children(tree, subtree, node)
    return {
        "type": "object",
        "properties": {tree.nodes[c].name: node_schema(tree, subtree, c) for c in children},
        "required": [tree.nodes[c].name for c in children],
        # The schema names exactly what the text states: an extra key is an error, and a
        # schema-constrained decoder cannot invent keys ("PowerKW_1", "PowerKW_2", ...).
        "additionalProperties": False,
    }


def node_schema(tree: Tree, subtree: Subtree, node: str) -> dict[str, Any]:
    """The JSON Schema of one property of the subtree, with its description."""
    prop = tree.nodes[node]
    head: dict[str, Any] = {"description": prop.description}
    if prop.kind == OBJECT:
        body = _object_schema(tree, subtree, node)
        return {"type": "object", **head, **{k: v for k, v in body.items() if k != "type"}}
    if prop.kind == OBJECT_LIST:
        return {"type": "array", **head, "items": _object_schema(tree, subtree, node)}
    if prop.kind == ENUM:
        return {"type": "string", **head, "enum": list(prop.pool)}
    if prop.kind == STRING_LIST:
        return {"type": "array", **head, "items": {"type": "string"}}
    if prop.kind == NUMBER_LIST:
        return {"type": "array", **head, "items": {"type": "number"}}
    return {"type": {STRING: "string", NUMBER: "number", BOOLEAN: "boolean"}[prop.kind], **head}


def build_schema(tree: Tree, subtree: Subtree) -> dict[str, Any]:
    """The subtree as a JSON Schema (Draft 7, the dialect used when `$schema` is absent):
    every kept property is required, since the text states every value, and no other
    property is allowed."""
    root = tree.nodes[subtree.root]
    return {"title": root.name, **node_schema(tree, subtree, subtree.root)}


def _number(prop: Prop, rng: random.Random) -> int | float:
    scale = 10**prop.places
    drawn = rng.randint(round(prop.low * scale), round(prop.high * scale))
    return drawn if prop.places == 0 else round(drawn / scale, prop.places)


def _distinct_numbers(prop: Prop, k: int, rng: random.Random) -> list[int | float]:
    values: set[int | float] = set()
    while len(values) < k:
        values.add(_number(prop, rng))
    return sorted(values)


def leaf_value(prop: Prop, rng: random.Random) -> Any:
    if prop.kind in (STRING, ENUM):
        return rng.choice(prop.pool)
    if prop.kind == NUMBER:
        return _number(prop, rng)
    if prop.kind == BOOLEAN:
        return rng.random() < 0.5
    low, high = prop.count
    if prop.kind == STRING_LIST:
        return rng.sample(list(prop.pool), min(rng.randint(low, high), len(prop.pool)))
    if prop.kind == NUMBER_LIST:
        span = round((prop.high - prop.low) * 10**prop.places) + 1
        return _distinct_numbers(prop, min(rng.randint(low, high), span), rng)
    raise ValueError(f"{prop.name}: not a leaf")


def build_value(tree: Tree, subtree: Subtree, node: str, rng: random.Random) -> Any:
    """Ground truth for `node`: objects hold every kept child; items of a list of objects
    get distinct strings where the pool allows, so the text can tell them apart."""
    prop = tree.nodes[node]
    children = kept_children(tree, subtree, node)
    if prop.kind == OBJECT:
        return {tree.nodes[c].name: build_value(tree, subtree, c, rng) for c in children}
    if prop.kind == OBJECT_LIST:
        count = rng.randint(*prop.count)
        items: list[dict[str, Any]] = [{} for _ in range(count)]
        for child in children:
            child_prop = tree.nodes[child]
            if child_prop.kind in (STRING, ENUM) and len(child_prop.pool) >= count:
                column = rng.sample(list(child_prop.pool), count)
            else:
                column = [build_value(tree, subtree, child, rng) for _ in range(count)]
            for item, value in zip(items, column, strict=True):
                item[child_prop.name] = value
        return items
    return leaf_value(prop, rng)
