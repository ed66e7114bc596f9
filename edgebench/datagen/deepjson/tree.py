"""Property trees: the domain knowledge the generator draws schemas from.

A domain is a rooted tree of properties (DeepJSONEval, arXiv:2509.25922, "Schema Tree
Construction"): every node is a JSON property with a name, a description (it goes into
the JSON Schema and drives the description similarity of Algorithm 1), how the text
names it, and either children (an object, or a list of objects) or a value kind with
what values it takes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

OBJECT = "object"
OBJECT_LIST = "object_list"
STRING = "string"
NUMBER = "number"
BOOLEAN = "boolean"
ENUM = "enum"
STRING_LIST = "string_list"
NUMBER_LIST = "number_list"
CONTAINERS = (OBJECT, OBJECT_LIST)


@dataclass(frozen=True)
class Prop:
    """One property of a domain tree.

    `noun` is how prose names it ("clock speed"); for an object list it is the item
    ("core cluster") and `plural` the list ("core clusters"). Leaves say what values they
    take: `pool` (strings, enum options, list items), `low`/`high`/`places`/`unit` for
    numbers, `yes`/`no` (the predicate prose states for true and false) for booleans,
    `count` for lists.
    """

    name: str
    kind: str
    description: str
    noun: str
    children: tuple[Prop, ...] = ()
    plural: str = ""
    pool: tuple[str, ...] = ()
    low: float = 0
    high: float = 0
    places: int = 0
    unit: str = ""
    yes: str = ""
    no: str = ""
    count: tuple[int, int] = (2, 3)

    @property
    def is_leaf(self) -> bool:
        return self.kind not in CONTAINERS


# Builders, so domain files read like outlines.
def obj(name: str, description: str, noun: str, *children: Prop) -> Prop:
    return Prop(name, OBJECT, description, noun, children=children)


def olist(
    name: str, description: str, noun: str, plural: str, *children: Prop, count=(2, 3)
) -> Prop:
    return Prop(name, OBJECT_LIST, description, noun, children=children, plural=plural, count=count)


def text(name: str, description: str, noun: str, *pool: str) -> Prop:
    return Prop(name, STRING, description, noun, pool=pool)


def enum(name: str, description: str, noun: str, *options: str) -> Prop:
    return Prop(name, ENUM, description, noun, pool=options)


def num(name: str, description: str, noun: str, low: float, high: float, places=0, unit="") -> Prop:
    return Prop(name, NUMBER, description, noun, low=low, high=high, places=places, unit=unit)


def flag(name: str, description: str, noun: str, yes: str, no: str) -> Prop:
    return Prop(name, BOOLEAN, description, noun, yes=yes, no=no)


def texts(name: str, description: str, noun: str, *pool: str, count=(2, 3)) -> Prop:
    return Prop(name, STRING_LIST, description, noun, pool=pool, count=count)


def nums(
    name: str, description: str, noun: str, low: float, high: float, places=0, unit="", count=(2, 3)
) -> Prop:
    return Prop(
        name, NUMBER_LIST, description, noun, low=low, high=high, places=places, unit=unit,
        count=count,
    )  # fmt: skip


@dataclass(frozen=True)
class Domain:
    """A domain: its tree, how prose names the entity, and sentences that add noise."""

    name: str
    root: Prop
    entity: str  # "the smartwatch": the root object in prose
    names: tuple[str, ...]  # proper names for the entity, for the opening sentence
    filler: tuple[str, ...]  # true-sounding sentences that state no schema value


@dataclass
class Tree:
    """A domain tree indexed by node id (the dotted path of property names)."""

    domain: Domain
    nodes: dict[str, Prop] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    level: dict[str, int] = field(default_factory=dict)  # the domain root is level 1

    @classmethod
    def build(cls, domain: Domain) -> Tree:
        tree = cls(domain)
        pending: deque[tuple[Prop, str | None]] = deque([(domain.root, None)])
        while pending:
            prop, parent = pending.popleft()
            node = prop.name if parent is None else f"{parent}.{prop.name}"
            if node in tree.nodes:
                raise ValueError(f"domain {domain.name}: duplicate property {node}")
            tree.nodes[node] = prop
            tree.parent[node] = parent
            tree.children[node] = []
            tree.level[node] = 1 if parent is None else tree.level[parent] + 1
            if parent is not None:
                tree.children[parent].append(node)
            if prop.kind in CONTAINERS and not prop.children:
                raise ValueError(f"domain {domain.name}: {node} has no properties")
            pending.extend((child, node) for child in prop.children)
        return tree

    @property
    def root(self) -> str:
        return self.domain.root.name

    def height(self, node: str) -> int:
        """Levels of the deepest path from `node` down to a leaf, `node` included."""
        kids = self.children[node]
        return 1 + max((self.height(k) for k in kids), default=0)

    def ancestors(self, node: str) -> list[str]:
        """From the parent up to the domain root."""
        chain = []
        current = self.parent[node]
        while current is not None:
            chain.append(current)
            current = self.parent[current]
        return chain

    def distance(self, a: str, b: str) -> int:
        """Edges on the path between two nodes of the tree."""
        up_a = [a, *self.ancestors(a)]
        up_b = [b, *self.ancestors(b)]
        common = next(n for n in up_a if n in set(up_b))
        return up_a.index(common) + up_b.index(common)
