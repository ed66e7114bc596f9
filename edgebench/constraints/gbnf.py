"""GBNF grammar text for the `json` and `gbnf` modes.

`gbnf` converts the task's JSON Schema with llama-cpp-python's own converter (what its
users get from `LlamaGrammar.from_json_schema`). Converted grammars are cached on disk by
schema hash and converter version (bounded, least recently used first out:
grammar_cache.py); the ones for built-in datasets ship in `grammars/`
(a test keeps them equal to a fresh conversion). Text only: checking that llama.cpp can
parse a grammar needs the runtime and happens in the worker.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.constraints.grammar_cache import SUFFIX, GrammarCache, limit_from_env
from edgebench.io import write_text_atomic
from edgebench.paths import cache_dir
from edgebench.resources import resource_dir

JSON_GRAMMAR = "json.gbnf"
BUNDLED_FOLDER = "schemas"  # grammars/schemas/<dataset>/<schema id>.gbnf
_HEADER = re.compile(r"^# schema sha256 (?P<key>[0-9a-f]{64}) · converter (?P<conv>\S+)$")


@functools.cache
def converter_version() -> str:
    import llama_cpp

    return f"llama-cpp-python-{llama_cpp.__version__}"


def json_grammar() -> str:
    return (resource_dir("grammars") / JSON_GRAMMAR).read_text(encoding="utf-8")


def convert(schema: dict[str, Any]) -> str:
    """JSON Schema -> GBNF with llama-cpp-python's converter (may raise on odd schemas)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(schema))


def with_header(grammar: str, key: str, schema_label: str = "") -> str:
    """Grammar text as stored: a header naming the schema hash and the converter."""
    label = f"# {schema_label}: JSON Schema converted by llama-cpp-python\n" if schema_label else ""
    return f"# schema sha256 {key} · converter {converter_version()}\n{label}{grammar}"


def header_of(text: str) -> tuple[str, str] | None:
    match = _HEADER.match(text.split("\n", 1)[0])
    return (match["key"], match["conv"]) if match else None


@dataclass(frozen=True)
class GbnfText:
    text: str
    source: str  # "bundled", "disk cache" or "converted"


@functools.cache
def _bundled_index() -> dict[str, Path]:
    """Bundled grammars by schema hash; read once per process (they ship with the code)."""
    index: dict[str, Path] = {}
    folder = resource_dir("grammars") / BUNDLED_FOLDER
    for path in sorted(folder.glob("*/*.gbnf")) if folder.is_dir() else []:
        with path.open(encoding="utf-8") as handle:
            header = header_of(handle.readline())
        if header and header[1] == converter_version():
            index[header[0]] = path
    return index


def grammar_cache_dir() -> Path:
    return cache_dir() / "grammars"


def grammar_cache() -> GrammarCache:
    return GrammarCache(grammar_cache_dir(), limit_from_env())


def schema_grammar(schema: dict[str, Any], key: str) -> GbnfText:
    """The GBNF for `schema` (whose schema_key is `key`): bundled, cached or converted
    (and cached within the cache's size limits, see grammar_cache.py)."""
    bundled = _bundled_index().get(key)
    if bundled is not None:
        return GbnfText(bundled.read_text(encoding="utf-8"), "bundled")
    cache = grammar_cache()
    name = f"{key}.{converter_version()}{SUFFIX}"
    cached = cache.get(name)
    # a file edited or put there under the name of another schema is converted again
    if cached is not None and header_of(cached) == (key, converter_version()):
        return GbnfText(cached, "disk cache")
    text = with_header(convert(schema), key)
    cache.put(name, text)
    return GbnfText(text, "converted")


def write_schema_grammars(schemas: dict[str, dict[str, Any]], folder: Path) -> list[Path]:
    """Convert every schema (id -> schema) and write `<id>.gbnf` into `folder`; files of
    schemas no longer present are removed. Returns the files written."""
    from edgebench.scoring.schema import schema_key

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for schema_id, schema in sorted(schemas.items()):
        path = folder / f"{schema_id}.gbnf"
        write_text_atomic(path, with_header(convert(schema), schema_key(schema), schema_id))
        written.append(path)
    for stale in set(folder.glob("*.gbnf")) - set(written):
        stale.unlink()
    return written


def bundled_grammar_folder(dataset: str) -> Path:
    return resource_dir("grammars") / BUNDLED_FOLDER / dataset


def converter_formats() -> frozenset[str]:
    """String formats llama-cpp-python's converter has a grammar rule for."""
    from llama_cpp.llama_grammar import STRING_FORMAT_RULES

    return frozenset(STRING_FORMAT_RULES) | {"uuid"}
