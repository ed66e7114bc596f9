"""The `mask` mode's grammar engine: llguidance, driven token by token from our own loop.

The JSON Schema compiles to an llguidance grammar with fixed separators (", " and ": ")
and no other whitespace. A tiny model cannot pad forever, and every key after the first
character of a property becomes a run of forced tokens the decode loop fast-forwards.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from edgebench.constraints.ignored import llguidance_ignored

# The JSON text shape every schema mode aims at: one line, Python's json.dumps separators.
JSON_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


def import_llguidance() -> Any:
    from edgebench.errors import UserError

    try:
        import llguidance
        import llguidance.llamacpp
    except ImportError:
        raise UserError(
            "the mask constraint needs llguidance: pip install 'edgebench[llama]'"
        ) from None
    return llguidance


def _grammar(llguidance: Any, tokenizer: Any, schema: dict[str, Any], lenient: bool) -> str:
    matcher_cls = llguidance.LLMatcher
    options = {**JSON_OPTIONS, "lenient": lenient}
    try:
        grammar = matcher_cls.grammar_from_json_schema(schema, overrides=options)
    except ValueError as exc:
        raise ValueError(f"llguidance: {exc}") from None
    problem = matcher_cls.validate_grammar(grammar, tokenizer)
    if problem:
        raise ValueError(f"llguidance: {problem.strip()}")
    return grammar


def compile_schema(
    llguidance: Any,
    tokenizer: Any,
    schema: dict[str, Any],
    enforced_elsewhere: frozenset[str] = frozenset(),
) -> tuple[Any, tuple[str, ...]]:
    """A ready matcher for `schema` and the keywords it does not enforce.

    llguidance refuses keywords it has not implemented (e.g. `uniqueItems`); like the GBNF
    converter, which reads past such keywords silently, we then compile leniently and
    list what is not enforced (ignored.py: the refused keys but those in
    `enforced_elsewhere`, the keyword guard's; unknown formats; oneOf taken as anyOf).
    Anything else it refuses raises ValueError."""
    warnings: tuple[str, ...] = ()
    try:
        grammar = _grammar(llguidance, tokenizer, schema, lenient=False)
    except ValueError as exc:
        missing = unimplemented_keys(str(exc))
        if missing is None:
            raise
        grammar = _grammar(llguidance, tokenizer, schema, lenient=True)
        warnings = tuple(llguidance_ignored(schema, missing, enforced_elsewhere))
    matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
    if matcher.is_error():
        raise ValueError(f"llguidance: {matcher.get_error()}")
    return matcher, warnings


def unimplemented_keys(message: str) -> list[str] | None:
    """The keywords in llguidance's 'Unimplemented keys: [...]' refusal; None for any
    other message."""
    match = re.search(r"Unimplemented keys: (\[[^\]]*\])", message)
    if match is None:
        return None
    try:
        keys = json.loads(match.group(1))
    except ValueError:
        return []
    return [k for k in keys if isinstance(k, str)]


class TokenMask:
    """A reusable bitmask buffer and the helpers to read it, for one vocabulary size."""

    def __init__(self, n_vocab: int) -> None:
        self.n_vocab = n_vocab
        self.words = np.zeros((n_vocab + 31) // 32, dtype=np.int32)
        self._address = self.words.ctypes.data
        self._nbytes = self.words.nbytes

    def fill(self, matcher: Any) -> None:
        matcher.unsafe_compute_mask_ptr(self._address, self._nbytes)

    def allowed(self) -> np.ndarray:
        """Boolean array over the vocabulary (bit i of word i // 32 is token i)."""
        bits = np.unpackbits(self.words.view(np.uint8), bitorder="little")
        return bits[: self.n_vocab].view(bool)

    def allows_only(self, token: int) -> bool:
        word, bit = divmod(token, 32)
        if not (int(self.words[word]) >> bit) & 1:
            return False
        return int(np.unpackbits(self.words.view(np.uint8)).sum()) == 1
