"""Typed records that read and write themselves as JSON, and describe themselves as JSON
Schema.

A record is a frozen dataclass deriving from `Record`. Its fields' type hints are the
format: `to_json` writes the fields in declaration order, `from_json` checks every value
against its hint and says in one line where a file breaks the format, and
`json_schema` turns the same hints into the published schema (docs/run-format.md).
Field documentation lives next to the field, as a comment on its line or on the lines
just above it; `field_doc` reads it from the source for the published format.

Supported hints: str, int, float, bool, None, Path (a string in JSON), Any (any JSON),
Literal[...], X | None and other unions, list[X], tuple[X, ...], dict[str, X], and other
records. A field a reader does not know is ignored (a newer minor version may add
fields); a field a record lacks takes its default, or is an error when it has none.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from edgebench.readback import json_type

R = TypeVar("R", bound="Record")


class FormatError(ValueError):
    """A JSON value that does not have a record's shape; the message names where."""


class Record:
    """Base of every record (subclasses are frozen dataclasses)."""

    def to_json(self) -> dict[str, Any]:
        return _encode(self)

    @classmethod
    def from_json(cls: type[R], data: Any, where: str = "") -> R:
        """The record `data` holds; `where` names it in errors (empty: the root)."""
        return _decode_record(cls, data, where)


def _encode(value: Any) -> Any:
    if isinstance(value, Record):
        hints = _hints(type(value))
        encoded: dict[str, Any] = {}
        for field in dataclasses.fields(value):  # type: ignore[arg-type]
            item = getattr(value, field.name)
            # A field typed Any holds JSON already (a model's parsed output, an expected
            # value) and is kept as it is: a value nested as deeply as the parser allows
            # must not cost a Python frame per level here.
            encoded[field.name] = item if hints[field.name] is Any else _encode(item)
        return encoded
    if isinstance(value, list | tuple):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _encode(item) for key, item in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def _at(where: str, message: str) -> str:
    return f"{where}: {message}" if where else message


def _child(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _decode_record(cls: type[R], data: Any, where: str) -> R:
    if not isinstance(data, dict):
        raise FormatError(_at(where, f"expected an object, got {json_type(data)}"))
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.name in data:
            values[field.name] = _decode(
                hints[field.name], data[field.name], _child(where, field.name)
            )
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise FormatError(_at(where, f"field '{field.name}' is missing"))
    return cls(**values)


def _decode(hint: Any, value: Any, where: str) -> Any:
    if hint is Any:
        return value
    if hint is type(None) or hint is None:
        if value is not None:
            raise FormatError(_at(where, f"expected null, got {json_type(value)}"))
        return None
    if _is_union(hint):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        present = [option for option in options if option is not type(None)]
        errors = []
        for option in present:
            try:
                return _decode(option, value, where)
            except FormatError as exc:
                errors.append(exc)
        if len(present) == 1:  # X | None: X's own error says the most
            raise errors[0]
        raise FormatError(_at(where, f"expected {type_label(hint)}, got {json_type(value)}"))
    origin = get_origin(hint)
    if origin is Literal:
        if value not in get_args(hint):
            allowed = ", ".join(repr(v) for v in get_args(hint))
            raise FormatError(_at(where, f"{value!r} is not one of {allowed}"))
        return value
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise FormatError(_at(where, f"expected an array, got {json_type(value)}"))
        item = get_args(hint)[0]
        items = [_decode(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise FormatError(_at(where, f"expected an object, got {json_type(value)}"))
        item = get_args(hint)[1]
        return {_text(k): _decode(item, v, _child(where, k)) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Record):
        return _decode_record(hint, value, where)
    return _decode_scalar(hint, value, where)


def _text(value: str) -> str:
    """A string field as text every writer and terminal takes: a lone surrogate (a
    hand-edited "\\ud800", a byte that was not UTF-8) as its escape. Fields typed Any
    (a model's parsed output) keep theirs: their writers escape them."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _decode_scalar(hint: Any, value: Any, where: str) -> Any:
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        try:
            value = float(value) if ok else value
        except OverflowError:  # an integer of hundreds of digits
            raise FormatError(_at(where, "a number too large for a float")) from None
    elif hint is str:
        ok = isinstance(value, str)
        value = _text(value) if ok else value
    elif hint is Path:
        ok = isinstance(value, str)
        value = Path(value) if ok else value
    else:
        raise TypeError(f"unsupported type hint {hint!r} at {where}")
    if not ok:
        expected = {bool: "a boolean", int: "an integer", float: "a number"}.get(hint, "a string")
        raise FormatError(_at(where, f"expected {expected}, got {json_type(value)}"))
    return value


# -- JSON Schema --------------------------------------------------------------------
_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    Path: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
}


def json_schema(root: type[Record], title: str, description: str) -> dict[str, Any]:
    """A Draft 2020-12 JSON Schema of `root` and every record it holds (under `$defs`)."""
    defs: dict[str, Any] = {}
    body = _schema_of(root, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": description,
        **body,
        "$defs": dict(sorted(defs.items())),
    }


def _schema_of(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if hint is Any:
        return {}
    if hint is type(None) or hint is None:
        return {"type": "null"}
    if _is_union(hint):
        return {"anyOf": [_schema_of(option, defs) for option in get_args(hint)]}
    origin = get_origin(hint)
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    if origin in (list, tuple):
        return {"type": "array", "items": _schema_of(get_args(hint)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(get_args(hint)[1], defs)}
    if isinstance(hint, type) and issubclass(hint, Record):
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}  # placeholder: records may refer to themselves
            defs[hint.__name__] = _record_schema(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    return dict(_SCALARS[hint])


def _record_schema(cls: type[Record], defs: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        schema = _schema_of(hints[field.name], defs)
        text = field_doc(cls, field.name)
        properties[field.name] = {"description": text, **schema} if text else schema
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            required.append(field.name)
    return {
        "type": "object",
        "description": (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " "),
        "properties": properties,
        "required": required,
    }


def field_docs(cls: type[Record]) -> list[tuple[str, str, str]]:
    """(name, type as written, documentation) of every field, for the format page."""
    hints = _hints(cls)
    return [
        (field.name, type_label(hints[field.name]), field_doc(cls, field.name))
        for field in dataclasses.fields(cls)  # type: ignore[arg-type]
    ]


@cache
def _comment_docs(cls: type) -> dict[str, str]:
    """field -> the comment on its line, after the comment lines just above it."""
    lines, _ = inspect.getsourcelines(cls)
    docs: dict[str, str] = {}
    above: list[str] = []
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("#").strip())
            continue
        match = _FIELD.match(line)
        if match:
            trailing = line.partition("  # ")[2].strip()
            docs[match.group(1)] = " ".join([*above, trailing]).strip()
        above = []
    return docs


_FIELD = re.compile(r"^    (\w+): ")


def field_doc(cls: type, name: str) -> str:
    """What a record's field means, from the comment that documents it in the source."""
    for klass in cls.__mro__:
        if name in _comment_docs(klass) if dataclasses.is_dataclass(klass) else False:
            return _comment_docs(klass)[name]
    return ""


def type_label(hint: Any) -> str:
    """A type hint as a reader of the format page reads it: `list[ArmRecord]`, `str | null`."""
    if hint is Any:
        return "any JSON"
    if hint is type(None) or hint is None:
        return "null"
    if _is_union(hint):
        return " | ".join(type_label(option) for option in get_args(hint))
    origin = get_origin(hint)
    if origin is Literal:
        return " | ".join(f'"{v}"' for v in get_args(hint))
    if origin in (list, tuple):
        return f"list[{type_label(get_args(hint)[0])}]"
    if origin is dict:
        return f"dict[str, {type_label(get_args(hint)[1])}]"
    if hint is Path:
        return "str (path)"
    return hint.__name__


def nested_records(root: type[Record]) -> list[type[Record]]:
    """`root` and every record its fields hold, depth first in field order."""
    found: list[type[Record]] = []

    def visit(hint: Any) -> None:
        if isinstance(hint, type) and issubclass(hint, Record):
            if hint in found:
                return
            found.append(hint)
            for field in dataclasses.fields(hint):  # type: ignore[arg-type]
                visit(_hints(hint)[field.name])
            return
        for arg in get_args(hint):
            visit(arg)

    visit(root)
    return found
