"""A grammar cache that cannot be written (read-only, full, not a folder) costs a
conversion each time, never the compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.constraints import gbnf, schema_key


def test_an_unwritable_grammar_cache_still_converts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("EDGEBENCH_CACHE", str(blocker))
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    first = gbnf.schema_grammar(schema, schema_key(schema))
    again = gbnf.schema_grammar(schema, schema_key(schema))
    assert (first.source, again.source) == ("converted", "converted")
    assert first.text == again.text and "root ::=" in first.text
