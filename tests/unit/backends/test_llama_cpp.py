"""The llama.cpp backend's pure parts (no model): cutting the output at a stop string."""

from __future__ import annotations

import pytest

from edgebench.backends.llama_cpp import _cut_at_stop


@pytest.mark.parametrize(
    ("text", "start", "expected", "found"),
    [
        (b'{"a": 1}\n```', 0, b'{"a": 1}\n', True),
        (b'{"a": 1}\n``', 0, b'{"a": 1}\n``', False),
        (b"``` earlier ``` later", 10, b"``` earlier ", True),
    ],
)
def test_stop_string_cut(text: bytes, start: int, expected: bytes, found: bool) -> None:
    out = bytearray(text)
    assert _cut_at_stop(out, [b"```"], start) is found
    assert bytes(out) == expected
