"""Constraint modes as the command line names them, and what a backend is asked to
compile for each."""

from __future__ import annotations

import pytest

from edgebench.constraints import MODES, parse_modes, request_for, schema_key
from edgebench.constraints.spec import accepted_modes
from edgebench.errors import UserError
from tests.helpers.constraints import SCHEMA_A


def test_modes_are_parsed_in_order_without_repeats() -> None:
    assert parse_modes("none, mask,gbnf,mask") == ["none", "mask", "gbnf"]


@pytest.mark.parametrize(
    ("text", "fragment"), [("nonee", "unknown mode 'nonee'"), (" , ", "at least one mode")]
)
def test_bad_modes_are_one_line_errors(text: str, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment) as info:
        parse_modes(text)
    assert "\n" not in str(info.value)
    assert ", ".join(MODES) in str(info.value)  # the known modes are listed


def test_schema_key_ignores_key_order() -> None:
    assert schema_key({"a": 1, "b": [1, 2]}) == schema_key({"b": [1, 2], "a": 1})
    assert schema_key({"a": 1}) != schema_key({"a": 2})


def test_requests_per_mode() -> None:
    assert request_for("none", SCHEMA_A, "alpha") is None
    json_request = request_for("json", SCHEMA_A, "alpha")
    assert json_request is not None and json_request.schema is None
    assert json_request.key == "json"  # one grammar whatever the schema
    for mode in ("gbnf", "outlines", "mask"):
        request = request_for(mode, SCHEMA_A, "alpha")
        assert request is not None and request.mode == mode
        assert request.schema == SCHEMA_A and request.key == schema_key(SCHEMA_A)
        assert request.label == "alpha"


def test_an_unknown_mode_lists_every_accepted_value_the_closing_arms_too() -> None:
    """A user who typed `mask+clse` learns that `mask+close` is a value (issue 37)."""
    with pytest.raises(UserError) as info:
        parse_modes("mask+clse")
    message = str(info.value)
    assert accepted_modes() == [*MODES, "mask+close"]
    assert f"(known: {', '.join(accepted_modes())})" in message
    assert parse_modes(",".join(accepted_modes())) == accepted_modes()  # each one is taken
