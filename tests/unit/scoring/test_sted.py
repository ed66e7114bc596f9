"""STED similarity and the consistency score (paper 002, docs/metrics.md)."""

from __future__ import annotations

import math

import pytest

from edgebench.scoring.similarity import normalise_key, text_similarity
from edgebench.scoring.sted import (
    StedParams,
    consistency_score,
    pairwise_similarities,
    primitive_similarity,
    sted,
)

USER = {"user": {"name": "John", "age": 30, "email": "john@example.com"}, "active": True}


def test_key_reordering_gives_one() -> None:
    reordered = {"active": True, "user": {"email": "john@example.com", "age": 30, "name": "John"}}
    assert sted(reordered, USER) == 1.0


def test_flattening_a_nested_object_gives_almost_zero() -> None:
    nested = {"user": {"name": "John", "age": 30}}
    flat = {"user_name": "John", "user_age": 30}
    assert sted(flat, nested) < 0.1
    assert sted(nested, flat) < 0.1


def test_nesting_flat_fields_gives_zero() -> None:
    assert sted({"name": "John", "age": 30}, {"person": {"name": "John", "age": 30}}) == 0.0


def test_snake_case_against_camel_case_keys() -> None:
    snake = {"user_name": "John", "last_login": "2025-01-01", "account_id": 7}
    camel = {"userName": "John", "lastLogin": "2025-01-01", "accountId": 7}
    assert sted(snake, camel) >= 0.85
    assert normalise_key("HTTPStatusCode") == "http status code"
    assert normalise_key("user-name") == normalise_key("UserName") == "user name"


def test_arrays_are_compared_without_order() -> None:
    assert sted([1, "a", {"k": None}], [{"k": None}, 1, "a"]) == 1.0


def test_extra_children_cost_one_each_plus_the_size_penalty() -> None:
    # One child matched at cost 0, one unmatched: 1 - (0 + 1 + 0.1 * 1) / 2.
    assert sted({"a": 1, "b": 2}, {"a": 1}) == pytest.approx(0.45)
    params = StedParams(size_penalty=0.0)
    assert sted({"a": 1, "b": 2}, {"a": 1}, params) == pytest.approx(0.5)


def test_primitives() -> None:
    assert primitive_similarity(1, 1.0) == 1.0
    assert primitive_similarity(True, 1) == 0.0  # a boolean is never a number
    assert primitive_similarity("123", 123) == 0.9  # type coercion weight
    assert primitive_similarity("true", True) == 0.9
    assert primitive_similarity("30", 31) == 0.0
    assert primitive_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert text_similarity("", "") == 1.0
    assert sted({"a": 1}, {"a": [1]}) == 0.0  # different node kinds
    params = StedParams(type_coercion_weight=0.5)
    assert primitive_similarity("123", 123, params) == 0.5


def test_structural_variant_ignores_values_and_semantic_ignores_structure() -> None:
    other_values = {"user": {"name": "Mary", "age": 41, "email": "m@x.org"}, "active": False}
    assert sted(other_values, USER, mode="structural") == 1.0
    assert sted(other_values, USER) < 0.7
    renamed = {"person": {"first": "John", "years": 30}, "mail": "john@example.com", "on": True}
    assert sted(renamed, USER, mode="semantic") == 1.0
    assert sted(renamed, USER) < 0.5


def test_consistency_score() -> None:
    assert consistency_score([1.0, 1.0, 1.0]) == 1.0
    assert consistency_score([]) is None
    assert consistency_score([0.6]) == pytest.approx(0.6)  # one pair: no deviation term
    # mean 0.5, population sigma 0.5 -> d = 1 -> 0.5 * e^-2
    assert consistency_score([1.0, 0.0]) == pytest.approx(0.5 * math.exp(-2))
    assert consistency_score([1.0, 0.0], steepness=1.0) == pytest.approx(0.5 * math.exp(-1))


def test_pairwise_similarities_and_unparseable_outputs() -> None:
    outputs = [(True, {"a": 1}), (True, {"a": 1}), (False, None)]
    assert pairwise_similarities(outputs) == [1.0, 0.0, 0.0]
    lenient = StedParams(unparseable_similarity=0.5)
    assert pairwise_similarities(outputs, lenient) == [1.0, 0.5, 0.5]
