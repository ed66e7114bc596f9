"""Two models read the same tokens (teacher forcing) and their next-token distributions
are compared at each answer position, inside one worker process (`TeacherForcing`, served
by `isolation.ProcessWorker`): the fidelity phase of a run (runner/fidelity.py).

Per example: the prompt, as the run rendered and tokenized it, then the expected answer's
tokens. The positions scored are those whose next token is an answer token: the prompt's
last token (predicting the answer's first) and every answer token but the last. Only
those rows' logits are asked of llama.cpp, so memory holds answer x vocabulary floats per
model, never a whole context's logits; the comparison (scoring/fidelity.py) happens here
and only per-position figures cross to the parent.
"""

from __future__ import annotations

import ctypes
import importlib
import os
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.errors import UserError
from edgebench.isolation import ProcessWorker
from edgebench.runtimes import runtime_info
from edgebench.scoring.fidelity import PositionScores, compare_logits
from edgebench.system.memory import MemoryPeak, MemorySampler

LOGITS_BATCH = 128  # tokens per llama_decode call of teacher forcing


class LogitsModel(Protocol):
    """What teacher forcing asks of a model: tokens, and logits at chosen positions."""

    def tokenize(self, text: str, special: bool) -> list[int]: ...
    def load(self, n_ctx: int) -> None: ...
    def n_vocab(self) -> int: ...
    def logits(self, tokens: list[int], first: int) -> npt.NDArray[np.float32]: ...
    def close(self) -> None: ...


class LlamaLogits:
    """A llama.cpp model (edgebench's llama backend: the run's tokenization) that returns
    the logits of the rows from `first` on, after a fresh KV cache."""

    def __init__(self, model_path: str, n_threads: int, n_batch: int = LOGITS_BATCH) -> None:
        # llama.cpp sizes its output and compute buffers for a whole batch of logits (n_batch
        # x vocabulary floats: 100 MB each per model at 512 and SmolLM2's 49k tokens), and
        # teacher forcing asks for logits: a smaller batch keeps the worker's peak down
        # (docs/performance.md has both figures).
        self.backend = LlamaCppBackend(model_path, n_threads, n_batch=n_batch)

    def tokenize(self, text: str, special: bool) -> list[int]:
        if self.backend.model is None:
            self.backend.count_tokens([])  # loads the vocabulary only
        return self.backend._tokenize(text, special)

    def load(self, n_ctx: int) -> None:
        self.backend.load(n_ctx)

    def n_vocab(self) -> int:
        return int(self.backend.L.llama_vocab_n_tokens(self.backend.vocab))

    def logits(self, tokens: list[int], first: int) -> npt.NDArray[np.float32]:
        b = self.backend
        L = b.L
        L.llama_memory_clear(L.llama_get_memory(b.ctx), True)
        n_batch = int(L.llama_n_batch(b.ctx))
        n_vocab = self.n_vocab()
        out = np.empty((len(tokens) - first, n_vocab), dtype=np.float32)
        batch = L.llama_batch_init(n_batch, 0, 1)
        try:
            for start in range(0, len(tokens), n_batch):
                chunk = tokens[start : start + n_batch]
                batch.n_tokens = len(chunk)
                for j, token in enumerate(chunk):
                    batch.token[j] = token
                    batch.pos[j] = start + j
                    batch.n_seq_id[j] = 1
                    batch.seq_id[j][0] = 0
                    batch.logits[j] = start + j >= first
                rc = L.llama_decode(b.ctx, batch)
                if rc != 0:
                    raise RuntimeError(f"llama_decode returned {rc}: {b.log.last_error()}")
                lo = max(start, first)
                rows = start + len(chunk) - lo
                if rows > 0:  # llama_get_logits: the flagged rows, in batch order
                    pointer = ctypes.cast(L.llama_get_logits(b.ctx), ctypes.POINTER(ctypes.c_float))
                    flat = np.ctypeslib.as_array(pointer, shape=(rows * n_vocab,))
                    out[lo - first : lo - first + rows] = flat.reshape(rows, n_vocab)
        finally:
            L.llama_batch_free(batch)
        return out

    def close(self) -> None:
        self.backend.close()


class TeacherForcing:
    """The reference and one variant, loaded side by side in one process."""

    def __init__(self, reference: LogitsModel, variant: LogitsModel) -> None:
        self.reference = reference
        self.variant = variant

    def _tokens(self, prompt: str, answer: str) -> tuple[list[int], list[int]]:
        # The reference's tokenizer for both: they must read the very same token ids.
        return self.reference.tokenize(prompt, True), self.reference.tokenize(answer, False)

    def count(self, pairs: list[tuple[str, str]]) -> list[tuple[int, int]]:
        """(prompt tokens, answer tokens) of each (prompt, answer)."""
        counts = []
        for prompt, answer in pairs:
            prompt_tokens, answer_tokens = self._tokens(prompt, answer)
            counts.append((len(prompt_tokens), len(answer_tokens)))
        return counts

    def load(self, n_ctx: int) -> None:
        self.reference.load(n_ctx)
        self.variant.load(n_ctx)
        n_ref, n_var = self.reference.n_vocab(), self.variant.n_vocab()
        if n_ref != n_var:
            raise UserError(
                f"the variant's vocabulary has {n_var} tokens, the reference's {n_ref}: "
                "not variants of one model"
            )

    def compare(self, prompt: str, answer: str) -> PositionScores:
        """KL and top-1 agreement at each answer position (none for an empty answer)."""
        prompt_tokens, answer_tokens = self._tokens(prompt, answer)
        if not answer_tokens:
            return PositionScores(np.empty(0), np.empty(0, dtype=bool))
        # The last answer token predicts nothing scored: it is not evaluated.
        tokens = prompt_tokens + answer_tokens[:-1]
        first = len(prompt_tokens) - 1
        reference = self.reference.logits(tokens, first)
        variant = self.variant.logits(tokens, first)
        return compare_logits(reference, variant)

    def close(self) -> None:
        self.reference.close()
        self.variant.close()


def logits_model(backend: str, model_path: str, n_threads: int, **options: Any) -> LogitsModel:
    """The logits of `model_path` under the run's runtime: llama.cpp (`n_batch` an option,
    for benchmarks), or the tests' fake."""
    info = runtime_info(backend)
    if info is None or info.logits is None:
        raise UserError(f"fidelity needs GGUF models run by llama.cpp, not the {backend} runtime")
    module_name, class_name = info.logits
    model = getattr(importlib.import_module(module_name), class_name)
    return model(model_path, n_threads=n_threads, **options)  # type: ignore[no-any-return]


def serve_teacher_forcing(
    backend: str,
    reference: str,
    variant: str,
    n_threads: int,
    options: dict[str, Any] | None = None,
) -> TeacherForcing:
    """The worker's factory (module level: it must pickle); `options` go to each model."""
    options = options or {}
    return TeacherForcing(
        logits_model(backend, reference, n_threads, **options),
        logits_model(backend, variant, n_threads, **options),
    )


class TeacherForcingWorker:
    """`TeacherForcing` in a worker process of its own (its memory, both models', is
    its own; a crash in native code is `WorkerDied` here, see isolation.py)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.process = ProcessWorker(serve_teacher_forcing, options)

    def count(self, pairs: list[tuple[str, str]]) -> list[tuple[int, int]]:
        return self.process.call("count", pairs)

    def load(self, n_ctx: int) -> None:
        self.process.call("load", n_ctx)

    def compare(self, prompt: str, answer: str) -> PositionScores:
        return self.process.call("compare", prompt, answer)

    def close(self) -> MemoryPeak:
        return self.process.close()


class InProcessTeacherForcing:
    """The same interface in this process (unit tests): no isolation."""

    def __init__(self, service: TeacherForcing) -> None:
        self.service = service
        self.memory = MemorySampler(os.getpid()).start()

    def count(self, pairs: list[tuple[str, str]]) -> list[tuple[int, int]]:
        return self.service.count(pairs)

    def load(self, n_ctx: int) -> None:
        self.service.load(n_ctx)

    def compare(self, prompt: str, answer: str) -> PositionScores:
        return self.service.compare(prompt, answer)

    def close(self) -> MemoryPeak:
        self.service.close()
        self.memory.sample()
        return self.memory.stop()
