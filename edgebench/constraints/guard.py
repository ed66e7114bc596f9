"""The schema keyword guard: enforces, on top of any grammar engine, the JSON Schema
keywords the engines read past.

llama-cpp-python's GBNF converter and outlines-core ignore `minimum`/`maximum` (an age of
2711123311111111 passes their grammars), and no engine edgebench drives enforces
`uniqueItems`. The guard follows the JSON text as it is generated, knows the subschema at
every position, and answers one question per candidate token: would appending this text
break a numeric bound or repeat an array item? The decode loop then takes the best token
the engine *and* the guard allow.

What it enforces, per value:
- numeric bounds (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, draft 4's
  boolean form too): a number may only grow into something that can still end in range,
  and may only end in range. Bounded numbers are written without an exponent.
- `multipleOf`: checked when the number ends.
- `uniqueItems`: an array item may not end equal (JSON equality) to an earlier one; items
  whose schema is an `enum`/`const` may not even start a value already used, since the
  grammar would force the rest of it.
Where the subschema cannot be known (`anyOf`, remote `$ref` ...), nothing is enforced.
"""

from __future__ import annotations

import codecs
import copy
import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from edgebench.scoring.equality import json_equal

# Keywords the guard enforces; the walkers in gbnf.py list a keyword as unenforced only
# when neither the engine nor the guard enforces it.
GUARDED_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems"}
)
# Under these the subschema that applies is not known while generating: not judged.
BRANCH_KEYWORDS = ("anyOf", "oneOf", "allOf", "not", "if")
_MAX_REF_DEPTH = 32
_WHITESPACE = " \t\n\r"
_NUMBER_CHARS = "0123456789-+.eE"


class _Veto(Exception):
    """The text fed would break the schema."""


# -- schema lookups ---------------------------------------------------------------------
def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any] | None:
    """`schema` with local `$ref`s followed; None when it cannot be known for sure."""
    for _ in range(_MAX_REF_DEPTH):
        if not isinstance(schema, dict):
            return None
        ref = schema.get("$ref")
        if ref is None:
            if any(k in schema for k in BRANCH_KEYWORDS):
                return None  # which branch applies is not known while generating
            return schema
        schema = local_ref(root, ref)
        if schema is None:
            return None
    return None


def local_ref(root: Any, ref: Any) -> Any:
    """The subschema a local `#/...` ref points at in `root`; None for any other ref."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    target: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def _property_schema(obj: dict[str, Any] | None, key: str, root: dict[str, Any]) -> Any:
    if obj is None:
        return None
    props = obj.get("properties")
    if isinstance(props, dict) and key in props:
        return _resolve(props[key], root)
    if obj.get("patternProperties"):
        return None  # a pattern may match the key: not known without running it
    extra = obj.get("additionalProperties")
    return _resolve(extra, root) if isinstance(extra, dict) else None


def _item_schema(arr: dict[str, Any] | None, index: int, root: dict[str, Any]) -> Any:
    if arr is None:
        return None
    prefix = arr.get("prefixItems")
    items = arr.get("items")
    if isinstance(prefix, list):
        if index < len(prefix):
            return _resolve(prefix[index], root)
        return _resolve(items, root) if isinstance(items, dict) else None
    if isinstance(items, list):  # draft 4-7 tuple form
        if index < len(items):
            return _resolve(items[index], root)
        extra = arr.get("additionalItems")
        return _resolve(extra, root) if isinstance(extra, dict) else None
    return _resolve(items, root) if isinstance(items, dict) else None


# -- numbers ----------------------------------------------------------------------------
def _decimal(value: Any) -> Decimal | None:
    """A schema's numeric keyword value; None for anything else (bools, NaN, strings)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


@dataclass(frozen=True)
class Bound:
    value: Decimal
    inclusive: bool


@dataclass(frozen=True)
class NumberRule:
    """What a schema asks of a number: bounds, multipleOf, integer or not."""

    low: Bound | None
    high: Bound | None
    multiple_of: Decimal | None
    integer: bool

    @classmethod
    def of(cls, schema: dict[str, Any] | None) -> NumberRule | None:
        if schema is None:
            return None
        low = high = None
        minimum, maximum = _decimal(schema.get("minimum")), _decimal(schema.get("maximum"))
        ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if minimum is not None:  # draft 4 writes exclusiveness as a boolean beside it
            low = Bound(minimum, ex_min is not True)
        if maximum is not None:
            high = Bound(maximum, ex_max is not True)
        if (value := _decimal(ex_min)) is not None:  # draft 6 on: a number of its own
            low = _tighter(low, Bound(value, False), max)
        if (value := _decimal(ex_max)) is not None:
            high = _tighter(high, Bound(value, False), min)
        multiple = _decimal(schema.get("multipleOf"))
        if low is None and high is None and multiple is None:
            return None
        types = schema.get("type")
        integer = types == "integer" or (isinstance(types, list) and types == ["integer"])
        return cls(low, high, multiple if multiple and multiple > 0 else None, integer)

    def accepts(self, value: Decimal) -> bool:
        if self.integer and value != value.to_integral_value():
            return False
        if not _within(value, self.low, self.high):
            return False
        return self.multiple_of is None or value % self.multiple_of == 0

    def reachable(self, prefix: str) -> bool:
        """Can a JSON number that starts with `prefix` (no exponent) still end in range?"""
        negative = prefix.startswith("-")
        body = prefix[1:] if negative else prefix
        whole, dot, fraction = body.partition(".")
        well_formed = (whole.isdigit() or (whole == "" and not dot)) and (
            fraction.isdigit() or fraction == ""
        )
        if not well_formed or (whole.startswith("0") and len(whole) > 1):
            return False  # not the start of a JSON number (no exponent: see the module doc)
        if dot and self.integer:
            return False
        for span in self._magnitudes(whole, dot, fraction):
            if self._meets(span.negated() if negative else span):
                return True
        return False

    def _magnitudes(self, whole: str, dot: str, fraction: str) -> list[_Span]:
        """The magnitudes a number body can still reach, as intervals."""
        if dot:  # digits may follow: [12.3, 12.4)
            start = Decimal(f"{whole}.{fraction}" if fraction else whole)
            return [_Span(start, True, start + Decimal(1).scaleb(-len(fraction)), False)]
        if whole == "":
            return [_Span(Decimal(0), True, None, False)]
        value = Decimal(whole)
        spans = [_Span(value, True, value, True)]  # ends here
        if not self.integer:
            spans.append(_Span(value, True, value + 1, False))  # a fraction follows
        if whole == "0":  # a leading zero takes no more digits
            return spans
        # One more digit, two more ...: [120, 130), [1200, 1300) ... up to past the bounds.
        limit = max((abs(b.value) for b in (self.low, self.high) if b), default=Decimal(0))
        scale = Decimal(10)
        while True:
            spans.append(_Span(value * scale, True, (value + 1) * scale, False))
            if value * scale > limit:
                return spans
            scale *= 10

    def _meets(self, span: _Span) -> bool:
        """Does the span hold a value (an integer, for integer schemas) in range?"""
        low, high = (
            _tighter(span.low_bound(), self.low, max),
            _tighter(span.high_bound(), self.high, min),
        )
        if low is None or high is None:
            return True
        if self.integer:
            first = _ceil(low.value) if low.inclusive else _floor(low.value) + 1
            last = _floor(high.value) if high.inclusive else _ceil(high.value) - 1
            return first <= last
        return low.value < high.value or (
            low.value == high.value and low.inclusive and high.inclusive
        )


@dataclass(frozen=True)
class _Span:
    """An interval of numbers; None at an end means unbounded there."""

    low: Decimal | None
    low_inclusive: bool
    high: Decimal | None
    high_inclusive: bool

    def negated(self) -> _Span:
        """The same magnitudes with a minus sign: [a, b) -> (-b, -a]."""
        return _Span(
            None if self.high is None else -self.high,
            self.high_inclusive,
            None if self.low is None else -self.low,
            self.low_inclusive,
        )

    def low_bound(self) -> Bound | None:
        return None if self.low is None else Bound(self.low, self.low_inclusive)

    def high_bound(self) -> Bound | None:
        return None if self.high is None else Bound(self.high, self.high_inclusive)


def _within(value: Decimal, low: Bound | None, high: Bound | None) -> bool:
    if low is not None and (value < low.value or (value == low.value and not low.inclusive)):
        return False
    return high is None or not (value > high.value or (value == high.value and not high.inclusive))


def _tighter(a: Bound | None, b: Bound | None, pick: Any) -> Bound | None:
    """The tighter of two lower (pick=max) or upper (pick=min) bounds; None = unbounded."""
    if a is None or b is None:
        return a or b
    if a.value == b.value:
        return Bound(a.value, a.inclusive and b.inclusive)
    return a if pick(a.value, b.value) == a.value else b


def _floor(value: Decimal) -> Decimal:
    return value.to_integral_value(rounding="ROUND_FLOOR")


def _ceil(value: Decimal) -> Decimal:
    return value.to_integral_value(rounding="ROUND_CEILING")


# -- the scanner --------------------------------------------------------------------------
@dataclass
class _Container:
    """An object or array being written, and what the guard knows about it."""

    kind: str  # "object" or "array"
    schema: dict[str, Any] | None
    expect: str  # object: "key", "colon", "value" or "next"; array: "value" or "next"
    empty: bool = True  # nothing inside yet, so a closing bracket may come
    key: str = ""
    index: int = 0
    unique: bool = False  # uniqueItems: items are collected and compared
    used: tuple[Any, ...] = ()
    item: str | None = None  # raw text of the current item (unique arrays only)
    enum_texts: tuple[str, ...] | None = None  # canonical JSON of enum items (unique arrays)

    def clone(self) -> _Container:
        return copy.copy(self)  # every field is immutable or replaced, never mutated


@dataclass
class _Scalar:
    """A string, number or literal being written."""

    kind: str  # "string", "number" or "literal"
    text: str
    rule: NumberRule | None = None
    is_key: bool = False
    escape: int = 0  # inside a string escape: 1 after the backslash, 2-5 in \uXXXX


class KeywordGuard:
    """Follows generated JSON text and vetoes pieces that would break the schema.

    `allows(piece)` checks without changing anything; `advance(piece)` commits text the
    decode loop appended; `try_advance(piece)` does both. Text after the top-level value
    is not judged."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.root = schema
        self.keywords = tuple(guarded_keywords(schema))
        self.reset()

    @property
    def active(self) -> bool:
        """Whether the schema has anything for the guard to enforce."""
        return bool(self.keywords)

    def reset(self) -> None:
        self.stack: list[_Container] = []
        self.scalar: _Scalar | None = None
        self.state = "before"  # "before" the top-level value, "inside", "after" it
        self.vetoes = 0  # candidates refused so far (for the sample record)
        self.dead_ends = 0  # times every candidate was refused and one was taken anyway

    def _snapshot(self) -> tuple[list[_Container], _Scalar | None, str]:
        scalar = copy.copy(self.scalar) if self.scalar is not None else None
        return [c.clone() for c in self.stack], scalar, self.state

    def _restore(self, saved: tuple[list[_Container], _Scalar | None, str]) -> None:
        self.stack, self.scalar, self.state = saved

    def allows(self, piece: str) -> bool:
        saved = self._snapshot()
        try:
            self._feed_all(piece)
            return True
        except _Veto:
            return False
        finally:
            self._restore(saved)

    def try_advance(self, piece: str) -> bool:
        """Commit `piece` if the guard allows it; else count a veto and change nothing."""
        saved = self._snapshot()
        try:
            self._feed_all(piece)
            return True
        except _Veto:
            self._restore(saved)
            self.vetoes += 1
            return False

    def advance(self, piece: str) -> None:
        """Commit text that was appended anyway (forced tokens, or a dead end). After text
        the guard would have refused it stops judging: the schema is broken already."""
        try:
            self._feed_all(piece)
        except _Veto:
            self.state = "after"

    def _feed_all(self, piece: str) -> None:
        for char in piece:
            if self.state == "after":
                return
            self._feed(char)

    # -- one character ---------------------------------------------------------------
    def _feed(self, char: str) -> None:
        for container in self.stack:
            if container.item is not None:
                container.item += char
        if self.scalar is not None and self._scalar_char(self.scalar, char):
            return
        if char in _WHITESPACE:
            return
        if self.state == "before":
            self.state = "inside"
            self._start_value(char, _resolve(self.root, self.root))
        elif not self.stack:
            self.state = "after"
        elif self.stack[-1].kind == "object":
            self._object_char(self.stack[-1], char)
        else:
            self._array_char(self.stack[-1], char)

    def _scalar_char(self, scalar: _Scalar, char: str) -> bool:
        """Feed the scalar in progress; False when `char` ended it and is structural."""
        if scalar.kind == "string":
            scalar.text += char
            if scalar.escape == 1:
                scalar.escape = 2 if char == "u" else 0
            elif scalar.escape:
                scalar.escape = scalar.escape + 1 if scalar.escape < 5 else 0
            elif char == "\\":
                scalar.escape = 1
            elif char == '"':
                self.scalar = None
                self._finish_scalar(scalar)
            else:
                self._check_enum_prefix()
            return True
        if char in _NUMBER_CHARS or (scalar.kind == "literal" and char.isalpha()):
            scalar.text += char
            if scalar.kind == "number":
                if scalar.rule is not None and (
                    char in "eE+" or not scalar.rule.reachable(scalar.text)
                ):
                    raise _Veto
                self._check_enum_prefix()
            return True
        # A delimiter ends a number or literal; it is not part of an item it ended.
        self.scalar = None
        top = self.stack[-1] if self.stack else None
        if top is not None and top.item is not None:
            top.item = top.item[:-1]
        self._finish_scalar(scalar)
        return False

    def _start_value(self, char: str, schema: dict[str, Any] | None) -> None:
        if char == "{":
            self.stack.append(_Container("object", schema, "key"))
        elif char == "[":
            unique = bool(schema and schema.get("uniqueItems") is True)
            enum_texts = _enum_texts(_item_schema(schema, 0, self.root)) if unique else None
            self.stack.append(
                _Container("array", schema, "value", unique=unique, enum_texts=enum_texts)
            )
        elif char == '"':
            self.scalar = _Scalar("string", char)
            self._check_enum_prefix()
        elif char in "-0123456789":
            rule = NumberRule.of(schema)
            self.scalar = _Scalar("number", char, rule=rule)
            if rule is not None and not rule.reachable(char):
                raise _Veto
            self._check_enum_prefix()
        else:
            self.scalar = _Scalar("literal", char)

    def _object_char(self, top: _Container, char: str) -> None:
        if top.expect == "key":
            if char == '"':
                self.scalar = _Scalar("string", char, is_key=True)
            elif char == "}" and top.empty:
                self._close()
        elif top.expect == "colon":
            if char == ":":
                top.expect = "value"
        elif top.expect == "value":
            top.empty = False
            self._start_value(char, _property_schema(top.schema, top.key, self.root))
        elif char == ",":
            top.expect = "key"
        elif char == "}":
            self._close()

    def _array_char(self, top: _Container, char: str) -> None:
        if top.expect == "value":
            if char == "]" and top.empty:
                self._close()
                return
            top.empty = False
            if top.unique:
                top.item = char
            self._start_value(char, _item_schema(top.schema, top.index, self.root))
        elif char == ",":
            if top.enum_texts is not None and _all_used(top.enum_texts, top.used):
                raise _Veto  # every value is in: another item could only repeat one
            top.expect = "value"
        elif char == "]":
            self._close()

    def _close(self) -> None:
        self.stack.pop()
        self._value_done()

    def _finish_scalar(self, scalar: _Scalar) -> None:
        if scalar.is_key:
            key = _loads(scalar.text)
            self.stack[-1].key = key if isinstance(key, str) else ""
            self.stack[-1].expect = "colon"
            return
        if scalar.rule is not None:
            try:
                number = Decimal(scalar.text)
            except InvalidOperation:
                number = None
            if number is None or not scalar.rule.accepts(number):
                raise _Veto
        self._value_done()

    def _value_done(self) -> None:
        """A value ended: its container expects a separator; a unique array compares it."""
        if not self.stack:
            self.state = "after"
            return
        top = self.stack[-1]
        top.expect = "next"
        if top.kind != "array":
            return
        if top.item is not None:
            item, top.item = _loads(top.item), None
            if item is not _UNKNOWN:
                if any(json_equal(item, seen) for seen in top.used):
                    raise _Veto
                top.used = (*top.used, item)
        top.index += 1

    def _check_enum_prefix(self) -> None:
        """In a unique array of enum items, the item being written must still be able to
        become an unused value: once it is unambiguous, the grammar forces the rest."""
        top = self.stack[-1] if self.stack else None
        if top is None or top.enum_texts is None or top.item is None:
            return
        written = top.item
        if not any(text.startswith(written) for text in top.enum_texts):
            return  # written differently from the canonical form: judged when it ends
        used = {_canonical(value) for value in top.used}
        if not any(t.startswith(written) and t not in used for t in top.enum_texts):
            raise _Veto


_UNKNOWN = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _UNKNOWN


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _all_used(enum_texts: tuple[str, ...], used: tuple[Any, ...]) -> bool:
    return set(enum_texts) <= {_canonical(value) for value in used}


def _enum_texts(schema: dict[str, Any] | None) -> tuple[str, ...] | None:
    if schema is None:
        return None
    if "const" in schema:
        return (_canonical(schema["const"]),)
    values = schema.get("enum")
    if isinstance(values, list) and values:
        return tuple(_canonical(v) for v in values)
    return None


def guarded_keywords(schema: Any, path: str = "$") -> list[str]:
    """Where the guard enforces something in `schema`, e.g. "$.age: minimum, maximum"."""
    found: list[str] = []
    if isinstance(schema, list):
        for item in schema:
            found += guarded_keywords(item, path)
        return found
    if not isinstance(schema, dict) or any(k in schema for k in BRANCH_KEYWORDS):
        return found
    here = [k for k in sorted(GUARDED_KEYWORDS) if k in schema]
    if schema.get("uniqueItems") is not True and "uniqueItems" in here:
        here.remove("uniqueItems")
    if here:
        found.append(f"{path}: {', '.join(here)}")
    for name, sub in (schema.get("properties") or {}).items():
        found += guarded_keywords(sub, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += guarded_keywords(schema[key], f"{path}[]" if key == "items" else path)
    for key in ("prefixItems", "$defs", "definitions"):
        sub = schema.get(key)
        if isinstance(sub, list):
            found += guarded_keywords(sub, path)
        elif isinstance(sub, dict):
            for name, part in sub.items():
                found += guarded_keywords(part, f"{path}.{key}.{name}")
    return found


class TokenGuard:
    """The guard fed with token pieces (bytes): a token may end inside a UTF-8 character,
    so the text is decoded incrementally and a refused piece leaves no trace."""

    def __init__(self, guard: KeywordGuard) -> None:
        self.guard = guard
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def reset(self) -> None:
        self.guard.reset()
        self._decoder.reset()

    def try_piece(self, piece: bytes) -> bool:
        """Commit `piece` if the guard allows it."""
        state = self._decoder.getstate()
        if self.guard.try_advance(self._decoder.decode(piece)):
            return True
        self._decoder.setstate(state)
        return False

    def force_piece(self, piece: bytes) -> None:
        """Commit a piece appended without a choice (a forced token, a dead end)."""
        self.guard.advance(self._decoder.decode(piece))

    def pick(self, scores: Any, ids: Any, piece: Any, is_end: Any, draw: Any = None) -> int:
        """The highest-scoring token the guard allows, committed. `scores` (a float array,
        changed in place) belong to token ids `ids` (None: the index is the id); -inf
        marks tokens the engine refused. `piece(token)` gives its bytes; end-of-text
        tokens (`is_end`) are never refused. When the guard refuses every token the
        engine allows, the engine's best is taken anyway and counted as a dead end.
        With `draw` (sampling, see `backends.decoding.softmax_draw`) the candidate is
        drawn instead of the best, and drawn again among the rest when refused."""
        import numpy as np

        first = -1
        while True:
            best = int(np.argmax(scores)) if draw is None else draw(scores)
            token = best if ids is None else int(ids[best])
            if first < 0:
                first = token
            if not np.isfinite(scores[best]):  # nothing allowed is left
                self.guard.dead_ends += 1
                self.force_piece(piece(first))
                return first
            if is_end(token) or self.try_piece(piece(token)):
                return token
            scores[best] = -np.inf
