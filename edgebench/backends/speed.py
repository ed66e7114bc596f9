"""The speed-probe contract: what `edgebench bench` needs from a backend.

`edgebench bench` times prompt processing and token generation apart, the way
llama-bench does: `ppN` evaluates N prompt tokens as one batch, `tgN` evaluates N tokens
one at a time, each on an empty KV cache (or one filled to a given depth first). The
bench owns the clock and the token ids; a backend only has to clear its state and
evaluate tokens, synchronously. A runtime with a past/present key-value cache (ONNX
Runtime) implements it as "drop the past" and "run the session on these ids, keep the
present as the new past".

A runtime that evaluates tokens only inside its own generation loop (OpenVINO GenAI's
LLMPipeline) cannot do that: it is a `TimedProbe`, which runs one repetition of a test
itself and reports the seconds its own counters give (runtimes.py: `bench_timing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from edgebench.backends.base import LoadInfo


@dataclass(frozen=True)
class ProbeVocab:
    """What the bench needs to draw token ids: the vocabulary size, and the token a
    sequence starts with when the model adds one (BOS), else None."""

    size: int
    bos: int | None


@runtime_checkable
class SpeedProbe(Protocol):
    """Implemented by a backend next to `Backend`; `load(n_ctx)` comes first."""

    def load(self, n_ctx: int) -> LoadInfo: ...

    def probe_vocab(self) -> ProbeVocab:
        """Vocabulary size and BOS (after `load`)."""
        ...

    def probe_clear(self) -> None:
        """Forget every evaluated token (clear the KV cache / the past)."""
        ...

    def probe_eval(self, tokens: Sequence[int]) -> None:
        """Evaluate `tokens` after those already in the cache, as one batch (split
        into the runtime's batch size if needed), and return when the logits of the
        last token are computed. One token: one decoding step."""
        ...


@runtime_checkable
class TimedProbe(Protocol):
    """Implemented by a backend that times a test itself; `load(n_ctx)` comes first."""

    def load(self, n_ctx: int) -> LoadInfo: ...

    def probe_vocab(self) -> ProbeVocab:
        """Vocabulary size and BOS (after `load`)."""
        ...

    def probe_time(self, kind: str, prefix: Sequence[int], timed: Sequence[int]) -> float:
        """One repetition from an empty KV cache: `prefix` untimed, then `timed` as one
        batch (kind `pp`) or one token at a time (`tg`); the seconds the timed part took."""
        ...
