"""The JSON Schema checker: errors as one-line JSON paths, local references only (never the
network or a file), formats as annotations unless asked, a bad schema as a UserError."""

import json
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.scoring.schema import SchemaChecker, get_checker

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"$ref": "#/definitions/count"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
    "additionalProperties": False,
    "definitions": {"count": {"type": "integer", "minimum": 0}},
}


def checker(schema, **kwargs):
    return SchemaChecker(schema, source="test.json", **kwargs)


def test_valid_and_invalid_instances():
    person = checker(PERSON)
    assert person.is_valid({"name": "Ann", "age": 3, "tags": ["a"]})
    assert person.errors({"name": "Ann"}) == []
    assert not person.is_valid({"name": "Ann", "age": -1})


def test_errors_name_json_paths_and_are_limited():
    errors = checker(PERSON).errors({"age": "x", "tags": [1, 2], "extra": 1, "more": 2})
    assert len(errors) == 3
    assert all(e.startswith("$") and ": " in e for e in errors)
    assert any(e.startswith("$.tags[") for e in checker(PERSON).errors({"name": "a", "tags": [1]}))
    assert len(checker(PERSON).errors({"age": "x", "tags": [1, 2]}, limit=10)) == 4


def test_long_messages_are_cut_to_one_line():
    (error,) = checker({"type": "integer"}).errors("line\n" * 500)
    assert "\n" not in error
    assert len(error) < 300


def test_local_refs_resolve():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"name": {"type": "string"}},
        "items": {"$ref": "#/$defs/name"},
    }
    assert checker(schema).errors([1, "a"]) == ["$[0]: 1 is not of type 'string'"]


def test_embedded_id_resolves_without_fetching(no_network):
    schema = {
        "$id": "https://example.com/root.json",
        "properties": {"a": {"$ref": "item.json"}},
        "definitions": {"item": {"$id": "item.json", "type": "integer"}},
    }
    assert not checker(schema).is_valid({"a": "x"})
    assert no_network == []


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/schemas/person.json",
        "http://example.com/person.json#/definitions/name",
        "other.json#/definitions/name",
    ],
)
def test_remote_refs_are_refused_without_network(ref, no_network):
    with pytest.raises(UserError, match="points outside the schema") as info:
        checker({"properties": {"a": {"$ref": ref}}})
    assert "test.json" in str(info.value)
    assert ref in str(info.value)
    assert no_network == []


def test_file_refs_are_refused_even_when_the_file_exists(tmp_path, monkeypatch, no_network):
    (tmp_path / "defs.json").write_text(json.dumps({"name": {"type": "string"}}))
    monkeypatch.chdir(tmp_path)
    for ref in ((tmp_path / "defs.json").as_uri() + "#/name", "defs.json#/name"):
        with pytest.raises(UserError, match="never fetches remote or file references"):
            checker({"properties": {"a": {"$ref": ref}}})
    assert no_network == []


def test_missing_local_ref_is_a_user_error():
    with pytest.raises(UserError, match=r"test.json: \$ref '#/definitions/nope' does not resolve"):
        checker({"properties": {"a": {"$ref": "#/definitions/nope"}}})


def test_meta_schema_ref_resolves_offline(no_network):
    assert not checker({"$ref": "http://json-schema.org/draft-07/schema#"}).is_valid({"type": 5})
    assert no_network == []


def test_formats_are_annotations_unless_asked():
    schema = {"properties": {"mail": {"type": "string", "format": "email"}}}
    assert checker(schema).is_valid({"mail": "not an address"})
    strict = checker(schema, check_formats=True)
    assert strict.errors({"mail": "not an address"}) == [
        "$.mail: 'not an address' is not a 'email'"
    ]
    assert strict.is_valid({"mail": "a@example.com"})


def test_draft_7_when_no_dollar_schema():
    # dependentRequired exists from 2019-09 on; Draft 7 ignores it.
    schema = {"dependentRequired": {"a": ["b"]}}
    assert checker(schema).is_valid({"a": 1})
    newer = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    assert not checker(newer).is_valid({"a": 1})


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "strin"}, "test.json: invalid JSON Schema at $.type: "),
        (
            {"properties": {"a": {"minimum": "0"}}},
            "test.json: invalid JSON Schema at $.properties.a.minimum",
        ),
        ({"$schema": "https://example.com/my-dialect"}, "test.json: unknown $schema"),
        ({"$schema": 7}, "test.json: unknown $schema 7"),
    ],
)
def test_invalid_schema_is_a_one_line_user_error(schema, message):
    with pytest.raises(UserError) as info:
        checker(schema)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_boolean_schemas():
    assert checker(True).is_valid({"anything": 1})
    assert not checker(False).is_valid(1)


def test_too_deep_instance_is_invalid_not_a_crash():
    value: object = 1
    for _ in range(5_000):
        value = [value]
    (error,) = checker({"items": {"$ref": "#"}}).errors(value)
    assert "too deeply" in error


def test_get_checker_caches_by_content():
    first = get_checker(json.loads(json.dumps(PERSON)), source="a.json")
    again = get_checker(json.loads(json.dumps(PERSON)), source="b.json")
    assert first is again
    assert get_checker(PERSON, source="a.json", check_formats=True) is not first


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"items": schema}
    return schema


def test_depth_limit_is_checked_before_jsonschema_sees_the_schema() -> None:
    """99 JSON levels build (and validate) fine; 2,001 are refused with depth and limit,
    without the recursive meta-schema check running at all."""
    assert get_checker(_nested(99), source="ok.json").errors("x") == []
    with pytest.raises(UserError) as error:
        get_checker(_nested(2000), source="deep.json")
    assert str(error.value) == ("deep.json: schema nested too deeply: 2001 JSON levels (limit 100)")


def test_a_failure_inside_jsonschema_or_referencing_is_one_line() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "properties": {"c": {"$ref": "#q"}},
        "dependencies": {"a": {"$id": "#q"}, "b": ["a"]},
    }
    with pytest.raises(UserError, match=r"^x\.json: cannot be used as a JSON Schema \("):
        get_checker(schema, source="x.json")
