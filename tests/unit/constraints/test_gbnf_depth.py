"""A schema whose GBNF grammar would nest deeper than llama.cpp's parser survives is
refused before conversion, naming the keyword and the limit (the gbnf segfaults of
issue 25 were strings of maxLength 32767 and 65535)."""

from __future__ import annotations

import pytest

from edgebench.constraints.gbnf_depth import MAX_GBNF_NESTING, deepest_nesting, nesting_refusal


@pytest.mark.parametrize(
    ("schema", "depth", "where"),
    [
        ({"type": "string", "maxLength": 32767}, 32767, "$: maxLength 32767"),
        ({"type": "string", "minLength": 10, "maxLength": 65535}, 65525, "$: maxLength 65535"),
        (
            {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {}, "maxItems": 9000}},
            },
            9000,
            "$.tags: maxItems 9000",
        ),
        ({"type": "string", "pattern": "^[a-z]{2,70000}$"}, 69998, "$: pattern '^[a-z]{2,70000}$'"),
        # a pattern wins over a length in the converter: the length nests nothing
        ({"type": "string", "pattern": "^a+$", "maxLength": 99999}, 0, "$"),
        (
            {"$defs": {"x": {"type": "string", "maxLength": 5000}}},
            5000,
            "$.$defs.x: maxLength 5000",
        ),
        (
            {"anyOf": [{"type": "string", "maxLength": 8}, {"type": "array", "items": {}}]},
            8,
            "$: maxLength 8",
        ),
    ],
)
def test_the_deepest_repetition_is_found(schema: dict, depth: int, where: str) -> None:
    found = deepest_nesting(schema)
    assert (found.depth, found.where) == (depth, where)


def test_schemas_within_the_limit_pass_and_deeper_ones_are_refused_in_one_line() -> None:
    assert nesting_refusal({"type": "string", "maxLength": MAX_GBNF_NESTING}) is None
    assert nesting_refusal({"type": "string", "maxLength": True}) is None  # not a number
    message = nesting_refusal(
        {"type": "object", "properties": {"note": {"type": "string", "maxLength": 32767}}}
    )
    assert message == (
        "$.note: maxLength 32767 would nest the GBNF grammar 32767 groups deep "
        f"(limit {MAX_GBNF_NESTING}: llama.cpp's parser crashes on deep grammars)"
    )
