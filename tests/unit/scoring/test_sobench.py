"""SO-Bench field matching: fields of the ground truth, exact and fuzzy (paper 004)."""

from __future__ import annotations

from edgebench.scoring.sobench import FuzzyParams, leaf_matches, match_fields, no_match

TRUTH = {"name": "Riverside Services", "litres": 40.0, "lines": [{"sku": "A"}, {"sku": "B"}]}


def test_fields_are_every_path_below_the_root() -> None:
    # name, litres, lines, lines/0, lines/0/sku, lines/1, lines/1/sku
    result = match_fields(TRUTH, TRUTH)
    assert (result.fields, result.matched, result.full) == (7, 7, True)


def test_an_intermediate_field_needs_all_its_sub_fields() -> None:
    output = {"name": "Riverside Services", "litres": 40, "lines": [{"sku": "A"}, {"sku": "C"}]}
    result = match_fields(output, TRUTH)
    # lines/1/sku fails, so lines/1 and lines fail too.
    assert (result.matched, result.full) == (4, False)


def test_fuzzy_matching() -> None:
    output = {"name": "Riverside Service", "litres": 41.5, "lines": [{"sku": "A"}, {"sku": "B"}]}
    assert match_fields(output, TRUTH).matched == 5
    fuzzy = match_fields(output, TRUTH, FuzzyParams())
    assert (fuzzy.matched, fuzzy.full) == (7, True)
    strict = FuzzyParams(fuzzy_string_threshold=0.99, fuzzy_number_tolerance=0.01)
    assert match_fields(output, TRUTH, strict).matched == 5
    assert leaf_matches(0, 0, FuzzyParams()) and not leaf_matches(0.01, 0, FuzzyParams())
    assert not leaf_matches(True, 1, FuzzyParams())
    assert not leaf_matches("40", 40, FuzzyParams())


def test_fuzzy_numbers_are_compared_exactly() -> None:
    fuzzy = FuzzyParams()  # within 5% of the truth
    big = 10**400
    assert leaf_matches(big + big // 100, big, fuzzy)  # 1% off, no OverflowError
    assert not leaf_matches(2 * big, big, fuzzy)
    assert not leaf_matches(1e308, big, fuzzy) and not leaf_matches(big, 1e308, fuzzy)
    assert leaf_matches(105, 100, fuzzy) and not leaf_matches(106, 100, fuzzy)  # 5% is in
    assert not leaf_matches(2**53 + 1, 2**53, FuzzyParams(fuzzy_number_tolerance=0.0))


def test_empty_containers_and_missing_values() -> None:
    assert match_fields({"tags": [1]}, {"tags": []}).matched == 0
    assert match_fields({"tags": []}, {"tags": []}).full
    assert match_fields({}, {}).full and match_fields({}, {}).fields == 0
    assert not match_fields([], {}).full
    assert no_match(TRUTH).matched == 0
