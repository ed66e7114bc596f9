"""DeepJSONEval scores on hand-worked cases, one group per rule of docs/metrics.md; the
family that stores them per sample is tested in tests/unit/metrics/test_deepjson.py."""

import json

import pytest

from edgebench.scoring.deepjson import (
    deepjson_scores,
    element_type,
    element_type_scores,
    key_matching,
)
from edgebench.scoring.parse import parse_json_output
from edgebench.scoring.schema import SchemaChecker
from tests.helpers.movie import MOVIE, MOVIE_SCHEMA


# Primitives: 1 if equal under JSON equality, else 0.
@pytest.mark.parametrize(
    ("expected", "output", "score"),
    [
        ("HarmonyOS 3.0", "HarmonyOS 3.0", 1.0),
        ("HarmonyOS 3.0", "HarmonyOS 3", 0.0),
        (4, 4.0, 1.0),  # 1 == 1.0 in JSON
        (4, "4 GB", 0.0),
        (True, 1, 0.0),  # a boolean never equals a number
        (1, True, 0.0),
        (False, False, 1.0),
        (None, None, 1.0),
    ],
)
def test_primitives(expected, output, score):
    assert key_matching(expected, output) == score


def test_object_extra_keys_are_penalised_through_the_union():
    # matched: a (1) + b (0) over |{a, b} ∪ {a, b, c}| = 3
    assert key_matching({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}) == pytest.approx(1 / 3)
    # the same output without the extra key: 1 / 2
    assert key_matching({"a": 1, "b": 2}, {"a": 1, "b": 3}) == pytest.approx(1 / 2)


def test_object_missing_keys_count_in_the_denominator():
    assert key_matching({"a": 1, "b": 2}, {"a": 1}) == pytest.approx(1 / 2)
    assert key_matching({"a": 1, "b": 2}, {}) == 0.0


def test_nested_objects_recurse():
    expected = {"x": {"a": 1, "b": 2}, "y": "s"}
    # x: 1/2, y: 1 -> (0.5 + 1) / 2
    assert key_matching(expected, {"x": {"a": 1}, "y": "s"}) == pytest.approx(0.75)
    # x is not an object in the output: 0 for x
    assert key_matching(expected, {"x": [1, 2], "y": "s"}) == pytest.approx(0.5)


def test_object_against_non_object_is_zero():
    for output in ([{"a": 1}], "a", 1, None, True):
        assert key_matching({"a": 1}, output) == 0.0


def test_empty_object_needs_an_empty_object():
    assert key_matching({}, {}) == 1.0
    assert key_matching({}, {"a": 1}) == 0.0
    assert key_matching({}, []) == 0.0


def test_array_of_objects_of_unequal_length():
    expected = [{"a": 1}, {"a": 2}, {"a": 3}]
    # positions 0 and 1 compared (1 + 0), divided by max(3, 2)
    assert key_matching(expected, [{"a": 1}, {"a": 5}]) == pytest.approx(1 / 3)
    # output longer than expected: the extra element costs through max(len)
    assert key_matching([{"a": 1}], [{"a": 1}, {"a": 1}]) == pytest.approx(1 / 2)
    # element-wise km, not equality: half of the second object is right
    two = [{"a": 1, "b": 1}, {"a": 2, "b": 2}]
    assert key_matching(two, [{"a": 1, "b": 1}, {"a": 2, "b": 0}]) == pytest.approx(0.75)


def test_array_of_objects_is_compared_in_order():
    expected = [{"a": 1}, {"a": 2}]
    assert key_matching(expected, [{"a": 2}, {"a": 1}]) == 0.0


def test_array_of_objects_against_other_arrays_is_zero():
    expected = [{"a": 1}]
    assert key_matching(expected, [{"a": 1}, "x"]) == 0.0
    assert key_matching(expected, ["a"]) == 0.0
    assert key_matching(expected, {"a": 1}) == 0.0
    assert key_matching(expected, []) == 0.0  # an empty array matches nothing


def test_primitive_lists_use_the_jaccard_of_sets():
    # {b, c} shared, union {a, b, c, d}
    assert key_matching(["a", "b", "c"], ["b", "c", "d"]) == pytest.approx(0.5)
    assert key_matching(["a", "b", "c"], ["c", "b", "a"]) == 1.0  # order does not matter
    assert key_matching(["a", "b", "c"], ["a", "a", "b", "c"]) == 1.0  # nor duplicates
    assert key_matching(["a", "b"], []) == 0.0
    assert key_matching(["a"], "a") == 0.0  # not an array


def test_primitive_lists_compare_values_by_json_equality():
    # 1 == 1.0 is shared; true is not 2; union {1, 2, true}
    assert key_matching([1, 2], [1.0, True]) == pytest.approx(1 / 3)
    assert key_matching([True], [1]) == 0.0


BIG = 10**400  # a 401-digit integer: no float can hold it


def test_numbers_in_lists_compare_exactly_never_through_floats():
    assert key_matching([2**53 + 1], [2**53]) == 0.0  # equal as floats
    assert key_matching([2**53 + 1], [float(2**53)]) == 0.0
    assert key_matching([2**53 + 1, 3], [2**53 + 1, 3.0]) == 1.0  # 3 == 3.0 still
    assert key_matching([BIG, 1], [BIG, 1]) == 1.0  # no OverflowError
    assert key_matching([BIG], [BIG + 1]) == 0.0
    assert key_matching([BIG], [1e308]) == 0.0
    assert key_matching({"n": BIG}, {"n": BIG}) == 1.0


def test_empty_array_needs_an_empty_array():
    assert key_matching([], []) == 1.0
    assert key_matching([], [1]) == 0.0
    assert key_matching([], {}) == 0.0
    assert key_matching([], None) == 0.0


SCHEMA = MOVIE_SCHEMA
EXPECTED = MOVIE
CHECKER = SchemaChecker(SCHEMA, source="movie")


def test_the_syntax_gate_zeroes_all_three_scores():
    wrong_type = dict(EXPECTED, Year="2023")  # key matching alone would be 3/4
    assert key_matching(EXPECTED, wrong_type) == pytest.approx(0.75)
    scored = deepjson_scores(parse_json_output(json.dumps(wrong_type)), EXPECTED, CHECKER)
    assert scored["scores"] == {"syntax": 0, "key_matching": 0.0, "strict": 0, "valid_json": 1}
    assert scored["schema_errors"] == ["$.Year: '2023' is not of type 'number'"]
    unparsed = deepjson_scores(parse_json_output("no JSON"), EXPECTED, CHECKER)
    assert unparsed == {
        "scores": {"syntax": 0, "key_matching": 0.0, "strict": 0, "valid_json": 0},
        "schema_errors": [],
    }


def test_element_types_follow_the_schema():
    assert element_type({"type": "string", "enum": ["a"]}, "a") == "enum"
    assert element_type({"type": "string"}, "a") == "string"
    assert element_type({"type": "number"}, 3) == "number"
    assert element_type({"type": "boolean"}, True) == "boolean"
    assert element_type({"type": "array", "items": {"type": "number"}}, [1]) == "number_list"
    assert element_type({"type": "array", "items": {"type": "string"}}, []) == "string_list"
    assert element_type(None, [{"a": 1}]) == "object_list"
    assert element_type({"type": "object"}, {"a": 1}) is None


def test_element_type_scores_follow_paths_into_object_lists():
    output = dict(EXPECTED, IsSequel=True, Genres=["Thriller"])
    output["Ratings"] = [{"Source": "IMDb", "Score": 8.2}]
    scores = element_type_scores(EXPECTED, output, SCHEMA)
    assert scores["number"] == {"fields": 3, "key_matching": pytest.approx(2 / 3)}  # Year, 2 Scores
    assert scores["boolean"] == {"fields": 1, "key_matching": 0.0}
    assert scores["string_list"] == {"fields": 1, "key_matching": 0.5}
    assert scores["enum"] == {"fields": 2, "key_matching": 0.5}  # the second one is missing
    assert scores["object_list"] == {"fields": 1, "key_matching": 0.5}
    assert list(scores) == ["number", "boolean", "enum", "string_list", "object_list"]


def test_element_type_scores_count_fields_but_score_zero_when_the_gate_fails():
    gated = element_type_scores(EXPECTED, EXPECTED, SCHEMA, gate=False)
    open_gate = element_type_scores(EXPECTED, EXPECTED, SCHEMA)
    assert {k: v["fields"] for k, v in gated.items()} == {
        k: v["fields"] for k, v in open_gate.items()
    }
    assert all(v["key_matching"] == 1.0 for v in open_gate.values())
    assert all(v["key_matching"] == 0.0 for v in gated.values())


def test_null_leaves_and_booleans_score_as_docs_metrics_says() -> None:
    """Two documented differences from the reference's `compare_values`: a `null` leaf
    equal to `null` is a match here (the reference gives 0), and `true` never matches `1`
    (the reference's Python `==` matches them)."""
    assert key_matching({"a": None, "b": 1}, {"a": None, "b": 1}) == 1.0
    assert key_matching({"a": None}, {"a": "x"}) == 0.0
    assert key_matching({"a": True}, {"a": 1}) == 0.0
    assert key_matching([True, 2], [1, 2]) == pytest.approx(1 / 3)  # 2 of {true, 1, 2}
