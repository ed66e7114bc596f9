"""Which schema keywords each engine reads past, walked the way the engine walks a schema.

An engine that accepts a schema may still ignore part of it: output that breaks an
ignored keyword is the engine's gap, not the model's, so every compile lists them in
`constraint_warnings` ("$.tags: uniqueItems", "$: oneOf (as anyOf)"). Each walker mirrors
its engine's own dispatch, where the first matching keyword decides what is read:

- `gbnf`: llama-cpp-python 0.3.36's `SchemaConverter.visit` (llama_grammar.py): `$ref`,
  then `oneOf`/`anyOf` (oneOf as anyOf), a list of types (each type bare), `const`,
  `enum`, an object with `properties` or `additionalProperties`, an object `allOf` (only
  its branches' `properties`, every one required), an array with `items`/`prefixItems`
  (`minItems`/`maxItems` only with one `items` schema), a string `pattern`, the formats
  it has rules for, a string's `minLength`/`maxLength`, then the bare type.
- `outlines`: outlines-core 0.2's `Parser::to_regex` (src/json_schema/parsing.rs):
  `properties` (with `required`), `allOf`, `anyOf`, `oneOf` (as anyOf), `prefixItems`,
  `enum`, `const`, `$ref`, then the type: a string's length (before `pattern`, before
  `format`), an object's `minProperties`/`maxProperties`/`additionalProperties`, an
  array's `items`/`minItems`/`maxItems`; numeric bounds never.
- `mask`: llguidance refuses what it does not implement; compiled leniently after such a
  refusal it ignores those keys, unknown formats, and takes `oneOf` as `anyOf`
  (llguidance docs/json_schema.md), listed by `llguidance_ignored`.

Annotations (title, description, default, examples ...) are never listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from edgebench.constraints.guard import BRANCH_KEYWORDS, local_ref

# Keywords that constrain a value (JSON Schema drafts 4 to 2020-12).
VALIDATION_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "maxItems",
        "minItems", "uniqueItems", "contains", "maxContains", "minContains", "items",
        "prefixItems", "additionalItems", "unevaluatedItems", "maxProperties",
        "minProperties", "required", "properties", "patternProperties",
        "additionalProperties", "unevaluatedProperties", "propertyNames", "dependencies",
        "dependentRequired", "dependentSchemas", "allOf", "anyOf", "oneOf", "not", "if",
        "then", "else", "$ref", "$dynamicRef", "$recursiveRef", "contentEncoding",
    }
)  # fmt: skip
ONE_OF_AS_ANY_OF = "oneOf (as anyOf)"
_UUID = re.compile(r"^uuid[1-5]?$")  # the converter's uuid formats
# Formats llguidance implements (docs/json_schema.md).
LLGUIDANCE_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}
)
# Formats outlines-core has a regex for.
OUTLINES_FORMATS = frozenset({"date-time", "date", "time", "uuid", "uri", "email"})


@dataclass
class Reading:
    """What an engine reads of one schema object: keywords, notes on how, and the
    subschemas it goes on to (path, schema)."""

    used: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    children: list[tuple[str, Any]] = field(default_factory=list)

    def read(self, *keywords: str) -> Reading:
        self.used.update(keywords)
        return self


Reader = Callable[[dict[str, Any], str], Reading]


def _branches(schema: dict[str, Any], key: str, path: str) -> list[tuple[str, Any]]:
    items = schema.get(key)
    return (
        [(f"{path}.{key}[{i}]", s) for i, s in enumerate(items)] if isinstance(items, list) else []
    )


def _properties(schema: dict[str, Any], path: str) -> list[tuple[str, Any]]:
    props = schema.get("properties")
    return [(f"{path}.{n}", s) for n, s in props.items()] if isinstance(props, dict) else []


def _sub(schema: dict[str, Any], key: str, path: str) -> list[tuple[str, Any]]:
    sub = schema.get(key)
    return [(path, sub)] if isinstance(sub, dict) else []


def gbnf_reading(schema: dict[str, Any], path: str, formats: frozenset[str]) -> Reading:
    """What llama-cpp-python's converter reads of `schema` (see the module docstring)."""
    kind = schema.get("type")
    fmt = schema.get("format")
    r = Reading()
    if "$ref" in schema:
        return r.read("$ref")
    if "oneOf" in schema or "anyOf" in schema:
        key = "oneOf" if schema.get("oneOf") else "anyOf"
        r.read(key).children += _branches(schema, key, path)
        if key == "oneOf":
            r.notes.append(ONE_OF_AS_ANY_OF)
        return r
    if isinstance(kind, list):
        return r.read("type")
    if "const" in schema or "enum" in schema:
        return r.read("const" if "const" in schema else "enum", "type")
    if kind in (None, "object") and (
        "properties" in schema or schema.get("additionalProperties", True) is not True
    ):
        r.read("type", "properties", "required", "additionalProperties")
        r.children += _properties(schema, path) + _sub(schema, "additionalProperties", path)
        return r
    if kind in (None, "object") and "allOf" in schema:
        r.read("type", "allOf")
        for branch_path, branch in _branches(schema, "allOf", path):
            if isinstance(branch, dict):
                skipped = sorted(
                    set(branch) & VALIDATION_KEYWORDS - {"properties", "$ref", "anyOf"}
                )
                if skipped:
                    r.notes.append(f"{branch_path.rsplit('.', 1)[-1]} {', '.join(skipped)}")
                r.children += _properties(branch, path)
                if "$ref" in branch:  # the converter merges the target's properties
                    r.children.append((branch_path, branch))
        return r
    if kind in (None, "array") and ("items" in schema or "prefixItems" in schema):
        key = "items" if schema.get("items") or "prefixItems" not in schema else "prefixItems"
        if isinstance(schema[key], list):
            r.read("type", key).children += [(f"{path}[]", s) for s in schema[key]]
        else:
            r.read("type", key, "minItems", "maxItems").children += [(f"{path}[]", schema[key])]
        return r
    if kind in (None, "string") and "pattern" in schema:
        return r.read("type", "pattern")
    if kind in (None, "string") and isinstance(fmt, str) and (fmt in formats or _UUID.match(fmt)):
        return r.read("type", "format")
    if kind == "string":
        return r.read("type", "minLength", "maxLength")
    if schema.get("additionalProperties") is True:  # any object allows any property
        r.read("additionalProperties")
    return r.read("type")


def outlines_reading(schema: dict[str, Any], path: str) -> Reading:
    """What outlines-core's regex builder reads of `schema` (see the module docstring)."""
    r = Reading()
    if "properties" in schema:
        # additionalProperties is read as false: stricter, never a broken answer
        r.read("properties", "required", "type", "additionalProperties")
        r.children += _properties(schema, path)
        return r
    for key in ("allOf", "anyOf", "oneOf"):
        if key in schema:
            r.read(key).children += _branches(schema, key, path)
            if key == "oneOf":
                r.notes.append(ONE_OF_AS_ANY_OF)
            return r
    if "prefixItems" in schema:
        r.read("prefixItems", "type").children += [(f"{path}[]", s) for s in schema["prefixItems"]]
        return r
    for key in ("enum", "const", "$ref"):
        if key in schema:
            return r.read(key, "type")
    kinds = schema.get("type")
    r.read("type")
    for kind in kinds if isinstance(kinds, list) else [kinds]:
        if kind == "string":
            if "minLength" in schema or "maxLength" in schema:
                r.read("minLength", "maxLength")
            elif "pattern" in schema:
                r.read("pattern")
            else:
                r.read("format")
        elif kind == "object":
            r.read("minProperties", "maxProperties", "additionalProperties")
            r.children += _sub(schema, "additionalProperties", path)
        elif kind == "array":
            r.read("items", "minItems", "maxItems").children += _sub(schema, "items", f"{path}[]")
    return r


def _walk(root: Any, reader: Reader, enforced: frozenset[str]) -> Iterator[tuple[str, list[str]]]:
    """(path, ignored keywords) for every schema object the engine reads, following
    local refs once each."""
    pending: list[tuple[str, Any, frozenset[str]]] = [("$", root, enforced)]
    seen_refs: set[str] = set()
    while pending:
        path, schema, guarded = pending.pop(0)
        if not isinstance(schema, dict):
            continue
        if any(k in schema for k in BRANCH_KEYWORDS):
            guarded = frozenset()  # the guard does not judge where the branch is unknown
        reading = reader(schema, path)
        ignored = []
        for key in schema:
            if key in VALIDATION_KEYWORDS and key not in reading.used and key not in guarded:
                fmt = schema[key]
                ignored.append(f"format {fmt}" if key == "format" and isinstance(fmt, str) else key)
        ignored += reading.notes
        if ignored:
            yield path, ignored
        ref = schema.get("$ref") if "$ref" in reading.used else None
        if isinstance(ref, str) and ref not in seen_refs:
            seen_refs.add(ref)
            pending.append((ref, local_ref(root, ref), guarded))
        pending += [(p, s, guarded) for p, s in reading.children]


def _listed(found: Iterator[tuple[str, list[str]]]) -> list[str]:
    return [f"{path}: {', '.join(keys)}" for path, keys in found]


def gbnf_ignored(
    schema: Any, formats: frozenset[str], enforced: frozenset[str] = frozenset()
) -> list[str]:
    """Where llama-cpp-python's GBNF converter reads past `schema`'s keywords (`formats`:
    the formats it has rules for; `enforced`: keywords the keyword guard enforces)."""
    return _listed(_walk(schema, lambda s, p: gbnf_reading(s, p, formats), enforced))


def outlines_ignored(schema: Any, enforced: frozenset[str] = frozenset()) -> list[str]:
    """Where outlines-core reads past `schema`'s keywords."""
    return _listed(_walk(schema, outlines_reading, enforced))


def llguidance_ignored(schema: Any, refused: list[str], enforced: frozenset[str]) -> list[str]:
    """What llguidance compiled leniently ignores, where: the keys it refused (`refused`,
    from its message) but those the guard enforces, unknown formats, oneOf as anyOf."""
    keys = set(refused) - enforced
    found = []
    for path, schema_object in _objects(schema, "$"):
        notes = [k for k in schema_object if k in keys and k != "format"]
        fmt = schema_object.get("format")
        if isinstance(fmt, str) and fmt not in LLGUIDANCE_FORMATS:
            notes.append(f"format {fmt}")
        if "oneOf" in schema_object:
            notes.append(ONE_OF_AS_ANY_OF)
        if notes:
            found.append(f"{path}: {', '.join(notes)}")
    return found


def _objects(schema: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object below `schema`, with a path (a loose walk: any nesting)."""
    if isinstance(schema, list):
        for item in schema:
            yield from _objects(item, path)
    elif isinstance(schema, dict):
        yield path, schema
        for key, sub in schema.items():
            if key in ("enum", "const", "default", "examples"):
                continue
            if key == "properties" and isinstance(sub, dict):
                for name, prop in sub.items():
                    yield from _objects(prop, f"{path}.{name}")
            elif isinstance(sub, dict | list):
                yield from _objects(
                    sub, path if key in ("anyOf", "oneOf", "allOf") else f"{path}.{key}"
                )
