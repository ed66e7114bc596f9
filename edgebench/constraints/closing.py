"""The shortest text that turns a cut-off JSON answer into a whole value its schema allows.

`shortest_completion(text, schema)` reads the partial answer (from its first `{` or `[`)
as a stack of open containers, each with the part of the schema that applies to it, and
writes what closes it: the open scalar finished (a string's closing quote, an enum member
completed, a number's missing digit, a literal spelled out), a pending key's value, every
still-missing required key with the shortest valid value, then the closing brackets.
Separators are the ones the `mask` grammar uses (", " and ": ").

It is a suggestion for the constraint engine, not a guarantee: the decode loop forces it
through the engine token by token, and where the engine refuses (a pattern or a format
the shortest text does not meet) the model picks among the tokens the engine allows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Schema = dict[str, Any]
_MAX_REF_HOPS = 32
_LITERALS = ("true", "false", "null")


@dataclass
class _Frame:
    kind: str  # "object" or "array"
    schema: Schema | None
    # object: key_or_end, key, colon, value, after_value; array: value_or_end, value,
    # after_value
    state: str
    keys: list[str] = field(default_factory=list)
    key: str = ""  # the key whose value comes next (objects)
    items: int = 0  # values so far (arrays)


@dataclass
class _OpenScalar:
    kind: str  # "string", "key", "number" or "literal"
    text: str = ""
    escaped: bool = False


class _Schemas:
    """Local `$ref` resolution and the subschema that applies below a container."""

    def __init__(self, root: Schema | None) -> None:
        self.root = root if isinstance(root, dict) else {}

    def resolve(self, schema: Any, kind: str | None = None) -> Schema | None:
        """`schema` with local refs followed; among anyOf/oneOf options the first that
        admits `kind` (object, array, string, number, boolean, null)."""
        for _ in range(_MAX_REF_HOPS):
            if not isinstance(schema, dict):
                return None
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                schema = self._pointer(ref)
                continue
            options = schema.get("anyOf") or schema.get("oneOf")
            if isinstance(options, list) and options:
                chosen = next((o for o in options if self._admits(o, kind)), options[0])
                schema = chosen
                continue
            all_of = schema.get("allOf")
            if isinstance(all_of, list) and all_of:
                return self._merged(schema, all_of)
            return schema
        return None

    def _merged(self, schema: Schema, parts: list[Any]) -> Schema:
        merged: Schema = {k: v for k, v in schema.items() if k != "allOf"}
        for part in parts:
            resolved = self.resolve(part) or {}
            for key, value in resolved.items():
                if key == "properties" and isinstance(value, dict):
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required" and isinstance(value, list):
                    merged["required"] = [*merged.get("required", []), *value]
                else:
                    merged.setdefault(key, value)
        return merged

    def _pointer(self, ref: str) -> Any:
        node: Any = self.root
        for part in ref.lstrip("#").split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        return node

    def _admits(self, schema: Any, kind: str | None) -> bool:
        resolved = self.resolve(schema) if kind is not None else None
        if kind is None or resolved is None:
            return True
        types = _types(resolved)
        return not types or kind in types or (kind == "number" and "integer" in types)

    def child(self, frame: _Frame, kind: str | None = None) -> Schema | None:
        """The schema of the next value inside `frame`."""
        schema = frame.schema or {}
        if frame.kind == "object":
            properties = schema.get("properties")
            if isinstance(properties, dict) and frame.key in properties:
                return self.resolve(properties[frame.key], kind)
            extra = schema.get("additionalProperties")
            return self.resolve(extra, kind) if isinstance(extra, dict) else None
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and frame.items < len(prefix):
            return self.resolve(prefix[frame.items], kind)
        items = schema.get("items")
        if isinstance(items, list):
            return self.resolve(items[frame.items], kind) if frame.items < len(items) else None
        return self.resolve(items, kind)


def _types(schema: Schema) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    return [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def shortest_value(schema: Schema | None, schemas: _Schemas, depth: int = 0) -> str:
    """The shortest JSON text `schema` allows, as far as the common keywords say."""
    schema = schemas.resolve(schema)
    if schema is None or depth > 32:
        return "null"
    if "const" in schema:
        return _dump(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return min((_dump(v) for v in enum), key=len)
    types = _types(schema)
    kind = types[0] if types else _implied_type(schema)
    if "null" in types:
        kind = "null"
    if kind == "object":
        return _object_text(schema, schemas, depth)
    if kind == "array":
        count = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
        item = schemas.child(_Frame("array", schema, "value"))
        return "[" + ", ".join(shortest_value(item, schemas, depth + 1) for _ in range(count)) + "]"
    if kind == "string":
        return _dump(_shortest_string(schema))
    if kind in ("number", "integer"):
        return _shortest_number(schema, kind)
    if kind == "boolean":
        return "false"
    return "null"


def _implied_type(schema: Schema) -> str:
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return "null"


def _object_text(schema: Schema, schemas: _Schemas, depth: int) -> str:
    frame = _Frame("object", schema, "after_value")
    parts = []
    for key in _missing_required(frame):
        frame.key = key
        parts.append(f"{_dump(key)}: {shortest_value(schemas.child(frame), schemas, depth + 1)}")
    return "{" + ", ".join(parts) + "}"


_FORMAT_EXAMPLES = {
    "date": "2000-01-01",
    "time": "00:00:00Z",
    "date-time": "2000-01-01T00:00:00Z",
    "email": "a@b.co",
    "uri": "http://a",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "ipv4": "0.0.0.0",
}


def _shortest_string(schema: Schema) -> str:
    example = _FORMAT_EXAMPLES.get(schema.get("format", ""))
    if example is not None:
        return example
    length = schema.get("minLength", 0)
    return "a" * length if isinstance(length, int) and length > 0 else ""


def _shortest_number(schema: Schema, kind: str) -> str:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = 0
    if isinstance(low, (int, float)) and not isinstance(low, bool) and low > 0:
        value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    elif isinstance(high, (int, float)) and not isinstance(high, bool) and high < 0:
        value = high - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
    if kind == "integer" or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


# Formats whose values have one shape: a partial value that fits the example's shape so
# far is completed with the rest of the example.
_FIXED_SHAPE = ("date", "time", "date-time", "uuid")


def _string_rest(scalar: _OpenScalar, schema: Schema) -> str:
    """What finishes an open string: an enum member it starts, the rest of a fixed-shape
    format, an email's missing domain, or just the closing quote."""
    text = scalar.text
    if scalar.escaped:  # finish the escape: an escaped backslash
        return '\\"'
    enum = schema.get("enum")
    if isinstance(enum, list):
        match = next((v for v in enum if isinstance(v, str) and v.startswith(text)), None)
        if match is not None:
            return _dump(match)[1 + len(_dump(text)[1:-1]) :]
    fmt = schema.get("format")
    if fmt in _FIXED_SHAPE:
        example = _FORMAT_EXAMPLES[fmt]
        if len(text) < len(example) and all(
            (a.isdigit() and b.isdigit()) or a == b for a, b in zip(text, example, strict=False)
        ):
            return example[len(text) :] + '"'
    if fmt == "email":
        local, at, domain = text.partition("@")
        if not at:  # a local part may not end with a dot or a dash
            return ("" if local[-1:].isalnum() else "a") + '@a"'
        return ("" if domain[-1:].isalnum() else "a") + '"'
    return '"'


def _missing_required(frame: _Frame) -> list[str]:
    """Required keys not written yet, in the schema's property order."""
    schema = frame.schema or {}
    required = [k for k in schema.get("required", []) if isinstance(k, str)]
    properties = schema.get("properties")
    order = list(properties) if isinstance(properties, dict) else []
    ranked = sorted(required, key=lambda k: order.index(k) if k in order else len(order))
    return [k for k in dict.fromkeys(ranked) if k not in frame.keys]


class _Reader:
    """The partial answer as a stack of open containers and the scalar being written."""

    def __init__(self, schema: Schema | None) -> None:
        self.schemas = _Schemas(schema)
        self.root = self.schemas.resolve(schema)
        self.stack: list[_Frame] = []
        self.scalar: _OpenScalar | None = None
        self.done = False

    def read(self, text: str) -> None:
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            return
        for char in text[start:]:
            if self.done:
                return
            self._char(char)

    def _schema_for(self, kind: str) -> Schema | None:
        if not self.stack:
            return self.schemas.resolve(self.root, kind)
        return self.schemas.child(self.stack[-1], kind)

    def _char(self, char: str) -> None:
        scalar = self.scalar
        if scalar is not None:
            if scalar.kind in ("string", "key"):
                self._string_char(scalar, char)
                return
            if char.isalnum() or char in "+-.":
                scalar.text += char
                return
            self._end_value()
        if char.isspace():
            return
        frame = self.stack[-1] if self.stack else None
        if char in "{[":
            kind = "object" if char == "{" else "array"
            first = "key_or_end" if kind == "object" else "value_or_end"
            self.stack.append(_Frame(kind, self._schema_for(kind), first))
        elif char in "}]":
            self.stack.pop() if self.stack else None
            self._end_value()
        elif char == '"':
            in_key = (
                frame is not None
                and frame.kind == "object"
                and frame.state in ("key_or_end", "key")
            )
            self.scalar = _OpenScalar("key" if in_key else "string")
        elif char == ":" and frame is not None:
            frame.state = "value"
        elif char == "," and frame is not None:
            frame.state = "key" if frame.kind == "object" else "value"
        else:
            self.scalar = _OpenScalar("number" if char in "-0123456789" else "literal", char)

    def _string_char(self, scalar: _OpenScalar, char: str) -> None:
        if scalar.escaped:
            scalar.escaped = False
            scalar.text += char
        elif char == "\\":
            scalar.escaped = True
        elif char == '"':
            self.scalar = None
            if scalar.kind == "key":
                frame = self.stack[-1]
                frame.key, frame.state = scalar.text, "colon"
                frame.keys.append(scalar.text)
            else:
                self._end_value()
        else:
            scalar.text += char

    def _end_value(self) -> None:
        """A value just ended (closed bracket or finished scalar)."""
        self.scalar = None
        if not self.stack:
            self.done = True
            return
        frame = self.stack[-1]
        if frame.kind == "array" and frame.state != "after_value":
            frame.items += 1
        frame.state = "after_value"

    # -- the completion ---------------------------------------------------------------
    def completion(self) -> str:
        if self.done:
            return ""
        if not self.stack and self.scalar is None:
            return shortest_value(self.root, self.schemas)
        parts = [self._finish_scalar()]
        for depth in range(len(self.stack) - 1, -1, -1):
            parts.append(self._close(self.stack[depth]))
            if depth > 0:  # the closed value was the next outer container's latest
                outer = self.stack[depth - 1]
                outer.items += outer.kind == "array"
                outer.state = "after_value"
        return "".join(parts)

    def _finish_scalar(self) -> str:
        scalar, frame = self.scalar, self.stack[-1] if self.stack else None
        if scalar is None:
            return ""
        if scalar.kind == "key" and frame is not None:
            name = self._key_starting(frame, scalar.text)
            frame.keys.append(name)
            frame.key, frame.state = name, "colon"
            return name[len(scalar.text) :] + '"'
        schema = self._schema_for(scalar.kind if scalar.kind != "literal" else "boolean")
        if scalar.kind == "string":
            text = _string_rest(scalar, schema or {})
        elif scalar.kind == "number":
            text = "0" if scalar.text[-1:] in ("-", "+", ".", "e", "E") else ""
        else:
            word = next((w for w in _LITERALS if w.startswith(scalar.text)), "null")
            text = word[len(scalar.text) :] if word.startswith(scalar.text) else ""
        if frame is not None:
            frame.state = "after_value"
            if frame.kind == "array":
                frame.items += 1
        return text

    def _key_starting(self, frame: _Frame, prefix: str) -> str:
        """The key a partial key is most likely becoming: a missing required one, then
        any declared one not written yet."""
        properties = (frame.schema or {}).get("properties")
        declared = list(properties) if isinstance(properties, dict) else []
        for name in [*_missing_required(frame), *declared]:
            if name.startswith(prefix) and name not in frame.keys:
                return name
        return prefix

    def _close(self, frame: _Frame) -> str:
        schemas = self.schemas
        text = ""
        if frame.kind == "object":
            if frame.state == "key":  # after a comma: a key must follow
                missing = _missing_required(frame)
                declared = (frame.schema or {}).get("properties") or {}
                unseen = [k for k in declared if k not in frame.keys]
                name = (missing or unseen or [""])[0]
                frame.keys.append(name)
                frame.key, frame.state = name, "colon"
                text += _dump(name)
            if frame.state == "colon":
                text += ": "
                frame.state = "value"
            if frame.state == "value":
                text += shortest_value(schemas.child(frame), schemas)
                frame.state = "after_value"
            for key in _missing_required(frame):
                separator = ", " if frame.keys else ""
                frame.keys.append(key)
                frame.key = key
                text += f"{separator}{_dump(key)}: {shortest_value(schemas.child(frame), schemas)}"
            return text + "}"
        minimum = (frame.schema or {}).get("minItems", 0)
        minimum = minimum if isinstance(minimum, int) else 0
        if frame.state == "value":  # after a comma: an item must follow
            text += shortest_value(schemas.child(frame), schemas)
            frame.items += 1
        while frame.items < minimum:
            separator = ", " if frame.items else ""
            text += separator + shortest_value(schemas.child(frame), schemas)
            frame.items += 1
        return text + "]"


def shortest_completion(text: str, schema: Schema | None) -> str:
    """What to append to `text` (a JSON value cut off anywhere) so that it becomes a whole
    value, as short as the schema allows; "" when it is whole already."""
    reader = _Reader(schema)
    reader.read(text)
    return reader.completion()
