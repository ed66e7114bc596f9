"""Structure-BiEval metrics: CSA, NTED and the IR they are computed on (paper 001)."""

from __future__ import annotations

import pytest

from edgebench.scoring.ir import MAX_SCORED_DEPTH, leaf_triples, preorder, to_tree
from edgebench.scoring.structure import csa, nted, tree_edit_distance

ORDER = {
    "customer": {"name": "Ada", "address": {"city": "Oslo", "zip": "0150"}},
    "items": [{"sku": "A1", "qty": 2}, {"sku": "B7", "qty": 1}],
    "paid": True,
    "total": 30.5,
    "note": None,
}


@pytest.mark.parametrize("value", [ORDER, {"a": 1}, [1, "x", None], {}, [], "text", 0])
def test_identical_trees_score_one(value: object) -> None:
    assert nted(value, value) == 1.0
    assert csa(value, value) == 1.0


def test_key_order_never_matters() -> None:
    reordered = {
        "total": 30.5,
        "note": None,
        "paid": True,
        "items": ORDER["items"],
        "customer": {"address": {"zip": "0150", "city": "Oslo"}, "name": "Ada"},
    }
    assert nted(reordered, ORDER) == 1.0
    assert csa(reordered, ORDER) == 1.0


def test_a_string_typed_number_is_equal_for_csa() -> None:
    assert csa({"age": "30"}, {"age": 30}) == 1.0
    assert csa({"age": 30.0}, {"age": 30}) == 1.0
    assert csa({"ok": "True", "name": " Ada "}, {"ok": True, "name": "Ada"}) == 1.0
    # NTED labels leaves by type, so the string costs one rename out of 3 nodes.
    assert nted({"age": "30"}, {"age": 30}) == pytest.approx(1 - 1 / 3)


def test_csa_is_jaccard_of_leaf_triples() -> None:
    expected = {"a": 1, "b": 2, "c": 3}
    # 2 shared triples, 4 distinct in all.
    assert csa({"a": 1, "b": 2, "d": 4}, expected) == pytest.approx(2 / 4)
    assert leaf_triples({"u": [{"id": "7"}]}) == {(("u", 0), "id", ("num", 7))}


def test_nted_sees_structure_not_values() -> None:
    other_values = {**ORDER, "total": 99.0, "customer": {**ORDER["customer"], "name": "Bob"}}
    assert nted(other_values, ORDER) == 1.0
    assert csa(other_values, ORDER) < 1.0


def test_tree_edit_distance_counts_unit_operations() -> None:
    # {"a": 1} -> {"a": 1, "b": 2}: insert KEY b and its VALUE leaf.
    assert tree_edit_distance(to_tree({"a": 1}), to_tree({"a": 1, "b": 2})) == 2
    # Renaming a key is one operation.
    assert tree_edit_distance(to_tree({"a": 1}), to_tree({"b": 1})) == 1
    # root + 5 keys + customer (9 nodes) + items (11) + 3 leaves
    assert len(preorder(to_tree(ORDER))) == 29
    assert nted({"a": 1}, {"a": 1, "b": 2}) == pytest.approx(1 - 2 / 5)


def test_wrong_nesting_is_penalised() -> None:
    # Section 3.4.1: the address mounted under the root instead of the user.
    expected = {"user": {"name": "Ada", "address": {"city": "Oslo"}}}
    output = {"user": {"name": "Ada"}, "address": {"city": "Oslo"}}
    assert nted(output, expected) < 0.8
    assert csa(output, expected) == pytest.approx(1 / 3)


def test_absurdly_deep_output_scores_without_crashing() -> None:
    deep: object = 1
    for _ in range(MAX_SCORED_DEPTH + 50):
        deep = [deep]
    assert nted(deep, {"a": 1}) == 0.0
    assert csa(deep, {"a": 1}) == 0.0
