"""Records that write, read and describe themselves from their type hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest

from edgebench.record import FormatError, Record, field_doc, json_schema, type_label


@dataclass(frozen=True)
class Inner(Record):
    """A nested record."""

    value: int | float
    tag: Literal["a", "b"] = "a"


@dataclass(frozen=True)
class Outer(Record):
    """The root of the test records."""

    # what it is called,
    name: str  # a name
    path: Path | None = None
    items: list[Inner] = field(default_factory=list)
    by_key: dict[str, Inner | None] = field(default_factory=dict)
    pair: tuple[str, ...] = ()
    anything: Any = None


SAMPLE = Outer(
    name="x",
    path=Path("/tmp/a"),
    items=[Inner(1), Inner(2.5, "b")],
    by_key={"k": Inner(3), "none": None},
    pair=("p", "q"),
    anything={"deep": [1, None]},
)


def test_a_record_round_trips_through_json() -> None:
    data = SAMPLE.to_json()
    assert data["path"] == "/tmp/a" and data["pair"] == ["p", "q"]
    assert list(data) == ["name", "path", "items", "by_key", "pair", "anything"]
    assert Outer.from_json(data) == SAMPLE
    # ints stay ints and floats floats where a hint allows both
    assert Outer.from_json(data).items[0].value == 1 and isinstance(
        data["items"][1]["value"], float
    )


def test_missing_fields_take_their_defaults_and_unknown_ones_are_ignored() -> None:
    assert Outer.from_json({"name": "y", "added_later": 1}) == Outer(name="y")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "field 'name' is missing"),
        ({"name": 3}, "name: expected a string, got a number"),
        ({"name": "x", "items": {}}, "items: expected an array, got an object"),
        (
            {"name": "x", "items": [{"value": True}]},
            r"items\[0\].value: expected int \| float, got a boolean",
        ),
        ({"name": "x", "items": [{"value": 1, "tag": "c"}]}, "'c' is not one of 'a', 'b'"),
        ({"name": "x", "by_key": {"k": 5}}, "by_key.k: expected an object, got a number"),
        ([], "expected an object, got an array"),
    ],
)
def test_a_value_of_the_wrong_shape_is_named_where_it_is(data: Any, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        Outer.from_json(data)


def test_the_json_schema_accepts_what_the_record_writes_and_nothing_else() -> None:
    schema = json_schema(Outer, "outer", "test")
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(SAMPLE.to_json())
    assert schema["$defs"]["Outer"]["properties"]["name"]["description"] == (
        "what it is called, a name"
    )
    assert field_doc(Inner, "tag") == "" and field_doc(Outer, "pair") == ""
    assert schema["$defs"]["Outer"]["required"] == ["name"]
    assert not validator.is_valid({"name": "x", "items": [{"value": "1"}]})
    assert not validator.is_valid({"name": "x", "items": [{"value": 1, "tag": "c"}]})


def test_type_labels_read_as_written() -> None:
    assert type_label(dict[str, Inner | None]) == "dict[str, Inner | null]"
    assert type_label(Literal["a", "b"]) == '"a" | "b"'
    assert type_label(Path | None) == "str (path) | null"
