"""The GBNF grammars edgebench ships and caches."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from edgebench.constraints import gbnf, schema_key
from edgebench.constraints.guard import GUARDED_KEYWORDS
from edgebench.constraints.ignored import gbnf_ignored
from edgebench.resources import resource_dir
from edgebench.tasks.formats.edgejson import read_schema_folder

pytest.importorskip("llama_cpp")  # the converter is llama-cpp-python's


def test_bundled_edgejson_grammars_are_up_to_date(tmp_path: Path) -> None:
    """`edgebench data grammars` regenerates them; this fails when a schema or the
    converter changed and nobody did."""
    schemas = read_schema_folder(resource_dir("data") / "edgejson" / "schemas")
    fresh = tmp_path / "fresh"
    gbnf.write_schema_grammars(schemas, fresh)
    shipped = gbnf.bundled_grammar_folder("edgejson")
    assert sorted(p.name for p in shipped.glob("*.gbnf")) == sorted(
        p.name for p in fresh.glob("*.gbnf")
    )
    for path in fresh.glob("*.gbnf"):
        assert (shipped / path.name).read_text() == path.read_text(), path.name


def test_builtin_schemas_come_from_the_bundled_grammars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    schema = read_schema_folder(resource_dir("data") / "edgejson" / "schemas")["meter_reading"]
    found = gbnf.schema_grammar(schema, schema_key(schema))
    assert found.source == "bundled"
    assert "meter_reading" in found.text.splitlines()[1]


def test_other_schemas_are_converted_once_then_read_from_the_disk_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    first = gbnf.schema_grammar(schema, schema_key(schema))
    again = gbnf.schema_grammar(schema, schema_key(schema))
    assert (first.source, again.source) == ("converted", "disk cache")
    assert first.text == again.text and "root ::=" in first.text
    assert gbnf.header_of(first.text) == (schema_key(schema), gbnf.converter_version())


def test_keywords_the_converter_ignores_are_listed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "when": {"type": "string", "format": "date"},
            "mail": {"type": "string", "format": "hostname"},
            "items": {"type": "array", "items": {"type": "number", "multipleOf": 5}},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        },
    }
    assert gbnf_ignored(schema, gbnf.converter_formats()) == [
        "$.age: minimum, maximum",
        "$.mail: format hostname",
        "$.tags: uniqueItems",
        "$.items[]: multipleOf",
    ]
    # What the keyword guard enforces is not listed
    assert gbnf_ignored(schema, gbnf.converter_formats(), GUARDED_KEYWORDS) == [
        "$.mail: format hostname"
    ]


def test_converted_grammars_stay_within_the_cache_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    schemas = [
        {"type": "object", "properties": {f"p{n:02}": {"type": "integer"}}} for n in range(16)
    ]
    size = len(gbnf.with_header(gbnf.convert(schemas[0]), schema_key(schemas[0])).encode())
    limit = 10 * size  # ten grammars of this size fit
    monkeypatch.setenv("EDGEBENCH_GRAMMAR_CACHE_MB", str(limit / (1 << 20)))
    for schema in schemas:
        assert gbnf.schema_grammar(schema, schema_key(schema)).source == "converted"
    stored = list(gbnf.grammar_cache_dir().glob("*.gbnf"))
    assert 8 <= len(stored) <= 10 and sum(p.stat().st_size for p in stored) <= limit


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    "spoil",
    [
        _fifo,
        _zero,
        lambda p: p.write_bytes(b"\xff\xfe not UTF-8"),
        lambda p: p.write_text("root ::= [0-9]\n"),  # no header: not what it is named
        lambda p: p.write_text(p.read_text().replace("sha256 ", "sha256 0", 1)),
    ],
    ids=["fifo", "link to /dev/zero", "not UTF-8", "no header", "another schema's header"],
)
def test_a_cached_grammar_that_is_not_ours_is_converted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spoil: Callable[[Path], None]
) -> None:
    """The disk cache is read back like any file: a FIFO there hung the compile, a link
    to /dev/zero filled the memory; a grammar under another schema's name was used."""
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    first = gbnf.schema_grammar(schema, schema_key(schema))
    (cached,) = gbnf.grammar_cache_dir().glob("*.gbnf")
    spoil(cached)
    again = gbnf.schema_grammar(schema, schema_key(schema))
    assert again.source == "converted" and again.text == first.text
