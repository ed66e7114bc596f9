"""English prose that states every value of a ground-truth object, plus distractors.

Each object of the subtree becomes a paragraph; a value is named by its property's noun
and the chain of owners up to a list item or the entity ("the replacement strategy of the
cache policy of the cache of the second core cluster"), so the text is unambiguous at any
depth. Distractors are sentences the schema does not ask for: values of the domain's other
properties (drawn afresh) and neutral remarks about the entity.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from edgebench.datagen.deepjson.instance import kept_children, leaf_value
from edgebench.datagen.deepjson.subtree import Subtree
from edgebench.datagen.deepjson.tree import (
    BOOLEAN,
    NUMBER,
    NUMBER_LIST,
    OBJECT,
    OBJECT_LIST,
    STRING_LIST,
    Prop,
    Tree,
)

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
_VALUE_FRAMES = ("{s} is {v}.", "{s} is listed as {v}.", "{s} is given as {v}.")
_LIST_FRAMES = ("{s} are {v}.", "{s} are listed as {v}.")
DISTRACTORS = (2, 4)  # other-property sentences per text
FILLERS = (1, 2)  # neutral sentences per text


def number_text(value: int | float, unit: str) -> str:
    """The number exactly as the JSON holds it, then its unit."""
    return f"{value} {unit}".strip()


def join_words(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _capital(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def value_text(prop: Prop, value: Any) -> str:
    if prop.kind == NUMBER:
        return number_text(value, prop.unit)
    if prop.kind == NUMBER_LIST:
        return join_words([number_text(v, prop.unit) for v in value])
    if prop.kind == STRING_LIST:
        return join_words(list(value))
    return str(value)


def leaf_sentence(prop: Prop, value: Any, owner: str, rng: random.Random, first: bool) -> str:
    """One sentence stating `value`. `owner` names the object that holds the property;
    after the first sentence about an object, "its" refers back to it."""
    if prop.kind == BOOLEAN:
        subject = owner if first else "it"
        return _capital(f"{subject} {prop.yes if value else prop.no}.")
    subject = f"the {prop.noun} of {owner}" if first else f"its {prop.noun}"
    frames = _LIST_FRAMES if prop.kind in (STRING_LIST, NUMBER_LIST) else _VALUE_FRAMES
    return _capital(rng.choice(frames).format(s=subject, v=value_text(prop, value)))


@dataclass
class Writer:
    tree: Tree
    subtree: Subtree
    rng: random.Random
    entity_name: str

    def owner_of_root(self) -> str:
        """How the text names the subtree's root: the entity, or a part of it."""
        chain = [self.subtree.root, *self.tree.ancestors(self.subtree.root)]
        nouns = [self.tree.nodes[n].noun for n in chain[:-1]]  # the domain root is the name
        return " of ".join([*(f"the {noun}" for noun in nouns), self.entity_name])

    def paragraphs(self, node: str, value: Any, owner: str) -> list[str]:
        """The paragraph of one object (its leaves), then those of its objects and lists."""
        sentences: list[str] = []
        nested: list[str] = []
        first = True
        for child in kept_children(self.tree, self.subtree, node):
            prop = self.tree.nodes[child]
            child_value = value[prop.name]
            if prop.kind == OBJECT:
                nested += self.paragraphs(child, child_value, f"the {prop.noun} of {owner}")
            elif prop.kind == OBJECT_LIST:
                count = len(child_value)
                sentences.append(_capital(f"{owner if first else 'it'} has {count} {prop.plural}."))
                first = False
                for index, item in enumerate(child_value):
                    nested += self.paragraphs(child, item, f"the {ORDINALS[index]} {prop.noun}")
            else:
                sentences.append(leaf_sentence(prop, child_value, owner, self.rng, first))
                first = False
        return ([" ".join(sentences)] if sentences else []) + nested

    def distractors(self) -> list[str]:
        """Values of properties outside the subtree (never inside a list of objects, where
        "the first ..." would be ambiguous), stated with fresh values."""
        keep = set(self.subtree.nodes)
        options = []
        for node, prop in self.tree.nodes.items():
            if node in keep or not prop.is_leaf:
                continue
            chain = self.tree.ancestors(node)
            if any(self.tree.nodes[a].kind == OBJECT_LIST for a in chain):
                continue
            nouns = [f"the {self.tree.nodes[a].noun}" for a in chain[:-1]]
            options.append((prop, " of ".join([*nouns, self.entity_name])))
        count = min(len(options), self.rng.randint(*DISTRACTORS))
        return [
            leaf_sentence(prop, leaf_value(prop, self.rng), owner, self.rng, first=True)
            for prop, owner in self.rng.sample(options, count)
        ]


def render_text(
    tree: Tree, subtree: Subtree, value: dict[str, Any], entity_name: str, rng: random.Random
) -> str:
    """The text of one example: an opening line, a paragraph per object, distractor and
    filler sentences between paragraphs."""
    writer = Writer(tree, subtree, rng, entity_name)
    domain = tree.domain
    opening = f"This report describes {entity_name}, {_article(domain.root.noun)}."
    body = writer.paragraphs(subtree.root, value, writer.owner_of_root())
    noise = writer.distractors() + rng.sample(list(domain.filler), rng.randint(*FILLERS))
    rng.shuffle(noise)
    for sentence in noise:
        body.insert(rng.randint(0, len(body)), sentence)
    return "\n\n".join([opening, *body])


def _article(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"
