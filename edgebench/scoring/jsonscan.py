"""Find the first complete top-level JSON object or array in text that is still growing.

A decoder feeds the bytes of each new token; the scanner says when the answer's first
top-level value (one that starts at a `{` or `[` outside any earlier value) has closed and
decodes as strict JSON. Text before it (prose, a fence opening) is skipped; strings and
their escapes are followed, so brackets inside strings do not count. A candidate that
closes but is not JSON (`{name}` in prose) is passed over and scanning goes on after it;
one that never closes (a cut-off answer) is never complete, and nothing nested inside it
is a value of its own.

This is the rule `stop at the complete JSON` ends generation by, and the one
`first_value` extracts with, so a stopped answer and the full answer give the same value.
"""

from __future__ import annotations

from typing import Any

from edgebench.scoring.strict import InvalidJSON, decode_strict

_OPEN = frozenset(b"{[")
_CLOSE = frozenset(b"}]")
_QUOTE = ord('"')
_BACKSLASH = ord("\\")


class JsonValueScanner:
    """Incremental: `feed` bytes as they are decoded; `end` is the offset just after the
    first complete top-level value, once there is one."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.start: int | None = None  # where the complete value begins
        self.end: int | None = None
        self._pos = 0  # next byte to look at
        self._start: int | None = None  # where the open candidate began
        self._depth = 0
        self._in_string = False
        self._escaped = False

    @property
    def complete(self) -> bool:
        return self.end is not None

    def feed(self, data: bytes) -> bool:
        """Add decoded bytes; True once the first top-level value is complete."""
        if self.end is not None:
            return True
        self.data += data
        buf = self.data
        for i in range(self._pos, len(buf)):
            byte = buf[i]
            if self._start is None:
                if byte in _OPEN:
                    self._start, self._depth = i, 1
                continue
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif byte == _BACKSLASH:
                    self._escaped = True
                elif byte == _QUOTE:
                    self._in_string = False
            elif byte == _QUOTE:
                self._in_string = True
            elif byte in _OPEN:
                self._depth += 1
            elif byte in _CLOSE:
                self._depth -= 1
                if self._depth == 0 and self._close_candidate(i + 1):
                    self._pos = i + 1
                    return True
        self._pos = len(buf)
        return False

    def _close_candidate(self, end: int) -> bool:
        start, self._start = self._start, None
        assert start is not None
        text = self.data[start:end].decode("utf-8", "replace")
        try:
            decode_strict(text)
        except InvalidJSON:
            return False  # not JSON: look for the next top-level value after it
        self.start, self.end = start, end
        return True


def first_value(text: str) -> tuple[bool, Any]:
    """The first complete top-level JSON value in `text`: (True, value) or (False, None).
    What a deployment that reads the first JSON value of an answer gets."""
    scanner = JsonValueScanner()
    # surrogatepass: a lone surrogate in a stored answer round-trips instead of raising
    if not scanner.feed(text.encode("utf-8", "surrogatepass")):
        return False, None
    value = scanner.data[scanner.start : scanner.end].decode("utf-8", "surrogatepass")
    return True, decode_strict(value)
