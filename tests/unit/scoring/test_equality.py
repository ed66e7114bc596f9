"""JSON equality as every score uses it: 1 == 1.0, true is not 1, key order never counts;
the JSON kind of a Python value."""

import pytest

from edgebench.scoring.equality import json_equal, json_kind


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 1.0),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ([1, {"x": [2.0, "s"]}], [1.0, {"x": [2, "s"]}]),
        ({}, {}),
        ([], []),
        (10**400, 10**400),
        ([2**53 + 1], [2**53 + 1]),
        (None, None),
        ("é", "é"),
        ({"a": {"b": {"c": [True, None]}}}, {"a": {"b": {"c": [True, None]}}}),
    ],
)
def test_equal(a, b):
    assert json_equal(a, b)
    assert json_equal(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (True, 1),  # equal for Python, the reason json_equal exists
        (False, 0),
        (True, 1.0),
        ([True], [1]),
        ({"ok": False}, {"ok": 0}),
        (1, "1"),
        (None, False),
        ({}, []),
        ([1, 2], [2, 1]),
        ([[1, 2]], [[2, 1]]),
        ([1], [1, 1]),
        ({"a": 1}, {"a": 1, "b": None}),
        ({"a": 1}, {"b": 1}),
        ({"a": {"b": 1}}, {"a": {"b": 2}}),
        (2**53 + 1, 2**53),  # the same double
        ([2**53 + 1], [float(2**53)]),
        (10**400, 1e308),
        (10**400, 10**400 + 1),
    ],
)
def test_not_equal(a, b):
    assert not json_equal(a, b)
    assert not json_equal(b, a)


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for _ in range(depth):
        value = [{"k": value}]
    return value


def test_deep_values_do_not_overflow_the_stack():
    assert json_equal(_nested(10_000, 1), _nested(10_000, 1.0))
    assert not json_equal(_nested(10_000, 1), _nested(10_000, True))


def test_json_kind():
    kinds = [json_kind(v) for v in (True, 1, 1.5, "s", None, {}, [])]
    assert kinds == ["boolean", "number", "number", "string", "null", "object", "array"]
    with pytest.raises(TypeError):
        json_kind(object())
