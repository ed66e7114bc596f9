"""SO-Bench field matching (SO-Bench, arXiv:2511.21750, section 3.5; fixed in docs/metrics.md).

The fields of a ground truth are every path in it below the root: leaves and the
objects and arrays between them, array elements addressed by index. A leaf field
matches exactly (JSON equality) or fuzzily (strings by normalised edit-distance
similarity >= `fuzzy_string_threshold`, numbers within a relative error of
`fuzzy_number_tolerance`); an object or array field matches when the output holds the
same kind of container there and every sub-field matches (an empty one needs an empty
one). Keys or elements the output adds are not counted against it here; schema
validation catches those that the schema forbids.

Per sample this gives the number of fields, how many matched, and whether the root
matched (a full structure match). FMA and FSMA are aggregated over samples elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from edgebench.scoring.equality import json_equal, json_kind
from edgebench.scoring.similarity import text_similarity

_MISSING = object()  # no value at this path in the output


@dataclass(frozen=True)
class FuzzyParams:
    fuzzy_string_threshold: float = 0.8
    fuzzy_number_tolerance: float = 0.05  # relative to the ground-truth number


@dataclass(frozen=True)
class FieldMatch:
    fields: int  # ground-truth fields below the root
    matched: int
    full: bool  # the root matched: every field did


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def leaf_matches(found: Any, truth: Any, fuzzy: FuzzyParams | None) -> bool:
    """Exact when `fuzzy` is None, else the fuzzy rule for strings and numbers."""
    if fuzzy is not None:
        if isinstance(truth, str) and isinstance(found, str):
            return text_similarity(found, truth) >= fuzzy.fuzzy_string_threshold
        if _is_number(truth) and _is_number(found):
            return _within(found, truth, fuzzy.fuzzy_number_tolerance)
    return json_equal(found, truth)


def _within(found: int | float, truth: int | float, tolerance: float) -> bool:
    """|found - truth| <= tolerance * |truth|, in exact rational arithmetic: an integer is
    never rounded to a float (nor overflows one), and the tolerance is the decimal given."""
    exact_truth = Fraction(truth)
    return abs(Fraction(found) - exact_truth) <= Fraction(str(tolerance)) * abs(exact_truth)


def match_fields(pred: Any, expected: Any, fuzzy: FuzzyParams | None = None) -> FieldMatch:
    """Match every ground-truth field against the parsed output `pred`."""
    return _match(pred, expected, fuzzy)


def no_match(expected: Any) -> FieldMatch:
    """The result for an output that did not parse: no field matched."""
    return _match(_MISSING, expected, None)


def _match(pred: Any, expected: Any, fuzzy: FuzzyParams | None) -> FieldMatch:
    # Preorder list of (truth, output value at the same path, parent index); a child
    # always comes after its parent, so walking it backwards settles children first.
    nodes: list[tuple[Any, Any, int]] = []
    pending: list[tuple[Any, Any, int]] = [(expected, pred, -1)]
    while pending:
        truth, found, parent = pending.pop()
        index = len(nodes)
        nodes.append((truth, found, parent))
        if isinstance(truth, dict):
            inside = found if isinstance(found, dict) else {}
            pending.extend((v, inside.get(k, _MISSING), index) for k, v in truth.items())
        elif isinstance(truth, list):
            inside_list = found if isinstance(found, list) else []
            pending.extend(
                (v, inside_list[i] if i < len(inside_list) else _MISSING, index)
                for i, v in enumerate(truth)
            )
    matched = [True] * len(nodes)
    for index in range(len(nodes) - 1, -1, -1):
        truth, found, parent = nodes[index]
        if found is _MISSING:
            ok = False
        elif isinstance(truth, dict | list):
            same_kind = json_kind(found) == json_kind(truth)
            ok = matched[index] and same_kind and (bool(truth) or not found)
        else:
            ok = leaf_matches(found, truth, fuzzy)
        matched[index] = ok
        if not ok and parent >= 0:
            matched[parent] = False
    return FieldMatch(fields=len(nodes) - 1, matched=sum(matched[1:]), full=matched[0])
