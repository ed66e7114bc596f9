"""The KV cache of one ONNX request: the past keys and values of optimum's
`text-generation-with-past` graph (inputs past_key_values.N.key/value, outputs
present.N.key/value, each (1, heads, length, head_dim)), fed back step after step.

`BoundKV` (what the backend uses) keeps the cache in two preallocated buffers per
tensor and binds them to the session with onnxruntime's IO binding: step k reads its
past from one buffer and the graph writes its present straight into the other, so no
step allocates or copies the cache in Python (the graph's own Concat of past and new
still does, inside onnxruntime). `NumpyKV` is the loop edgebench had before: the cache as
numpy arrays passed to `session.run` and taken back from it each step. It stays for the
side-by-side benchmark (benchmarks/onnx_decode.py), for the integration test that
checks both give the same tokens, and for sessions without IO binding (the unit tests'
fake sessions).

`SharedKV` is for graphs whose attention is onnxruntime's GroupQueryAttention (the `gqa`
graph of `models convert`, models/onnx_graph.py): past and present are bound to the same
(1, heads, capacity, head_dim) buffer, which the operator reads up to the attention
mask's length and writes the new positions into in place, so a step copies nothing of
the cache at all, and the cache is bound once per buffer rather than every step.

Each cache splits a forward pass into `prepare` (inputs and outputs for the step),
`run` (onnxruntime) and `collect` (the cache for the next step, the last logits), so
the benchmark can time the three apart; `forward` does all three.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

_FIRST_CAPACITY = 256  # tokens; the buffers double when a request outgrows them


class KVCache(Protocol):
    length: int

    def forward(self, tokens: list[int]) -> np.ndarray: ...

    def prepare(self, tokens: list[int]) -> None: ...

    def run(self) -> None: ...

    def collect(self) -> np.ndarray: ...


def kv_names(layers: int, prefix: str) -> list[str]:
    """`prefix`.N.key and .value for every layer, in the graph's order."""
    return [f"{prefix}.{n}.{kind}" for n in range(layers) for kind in ("key", "value")]


def _step_inputs(tokens: list[int], start: int) -> dict[str, np.ndarray]:
    """input_ids and position_ids of `tokens` evaluated after `start` cached positions."""
    return {
        "input_ids": np.asarray([tokens], dtype=np.int64),
        "position_ids": np.arange(start, start + len(tokens), dtype=np.int64)[None, :],
    }


class _Steps:
    """A forward pass as the three parts the benchmark times apart."""

    def forward(self, tokens: list[int]) -> np.ndarray:
        """Evaluate `tokens` after what is cached; the logits of the last one."""
        self.prepare(tokens)
        self.run()
        return self.collect()

    def prepare(self, tokens: list[int]) -> None:
        raise NotImplementedError

    def run(self) -> None:
        raise NotImplementedError

    def collect(self) -> np.ndarray:
        raise NotImplementedError


class NumpyKV(_Steps):
    """The cache as numpy arrays in and out of `session.run` (the old loop)."""

    def __init__(self, session: Any, layers: int, kv_shape: tuple[int, int], dtype: Any) -> None:
        self.session = session
        heads, head_dim = kv_shape
        empty = np.zeros((1, heads, 0, head_dim), dtype=dtype)
        self.past_names = kv_names(layers, "past_key_values")
        self.past: dict[str, np.ndarray] = {name: empty for name in self.past_names}
        self.output_names = ["logits", *kv_names(layers, "present")]
        self.length = 0
        self._feed: dict[str, np.ndarray] = {}
        self._outputs: list[np.ndarray] = []
        self._count = 0

    def prepare(self, tokens: list[int]) -> None:
        self._count = len(tokens)
        total = self.length + self._count
        self._feed = {
            **_step_inputs(tokens, self.length),
            "attention_mask": np.ones((1, total), dtype=np.int64),
            **self.past,
        }

    def run(self) -> None:
        self._outputs = self.session.run(self.output_names, self._feed)

    def collect(self) -> np.ndarray:
        outputs, self._outputs, self._feed = self._outputs, [], {}
        for name, present in zip(self.past_names, outputs[1:], strict=True):
            self.past[name] = present
        self.length += self._count
        # A copy, so the prefill's logits for every prompt position (n x vocab floats,
        # ~100 MB for 500 tokens) are freed now rather than at the next step.
        return outputs[0][0, -1].copy()


class _Bound(_Steps):
    """What both IO-bound caches share: the step's inputs (ids, positions, the mask as a
    view of one buffer of ones) and the logits bound each step, the cache's capacity
    grown by doubling up to the request's limit. Subclasses keep and bind the cache."""

    def __init__(
        self,
        session: Any,
        layers: int,
        kv_shape: tuple[int, int],
        dtype: Any,
        vocab: int,
        max_tokens: int | None = None,
    ) -> None:
        self.session = session
        self.binding = session.io_binding()
        self.heads, self.head_dim = kv_shape
        self.dtype = np.dtype(dtype)
        self.vocab = vocab
        self.past_names = kv_names(layers, "past_key_values")
        self.present_names = kv_names(layers, "present")
        self.length = 0
        self.max_tokens = max_tokens
        self.capacity = 0
        self._ones = np.ones((1, 0), dtype=np.int64)
        self._step_logits = np.empty((1, 1, vocab), dtype=np.float32)
        self._logits = self._step_logits
        self._inputs: dict[str, np.ndarray] = {}  # alive until the step has run
        self._count = 0

    def _bind_step(self, tokens: list[int]) -> int:
        """Bind the step's inputs and logits (growing the cache first when it is full);
        the total length after the step."""
        self._count = len(tokens)
        total = self.length + self._count
        if total > self.capacity:
            self._grow(self._new_capacity(total))
        bind = self.binding
        self._inputs = _step_inputs(tokens, self.length)
        self._inputs["attention_mask"] = self._ones[:, :total]
        for name, value in self._inputs.items():
            bind.bind_cpu_input(name, value)
        if self._count == 1:
            self._logits = self._step_logits
        else:
            self._logits = np.empty((1, self._count, self.vocab), dtype=np.float32)
        bind.bind_output(
            "logits", "cpu", 0, np.float32, list(self._logits.shape), self._logits.ctypes.data
        )
        return total

    def run(self) -> None:
        self.session.run_with_iobinding(self.binding)

    def collect(self) -> np.ndarray:
        self.length += self._count
        self._inputs = {}
        logits = self._logits[0, -1].copy()  # the buffer is rewritten by the next step
        self._logits = self._step_logits  # the prefill's (n x vocab) buffer is freed
        return logits

    def _new_capacity(self, needed: int) -> int:
        """Room for at least `needed` tokens: doubling, up to the request's limit when
        one was given."""
        capacity = max(needed, _FIRST_CAPACITY, 2 * self.capacity)
        if self.max_tokens is not None:
            capacity = max(needed, min(capacity, self.max_tokens))
        return capacity

    def _grow(self, capacity: int) -> None:
        """New buffers of `capacity` tokens holding the cached positions."""
        raise NotImplementedError


class BoundKV(_Bound):
    """The cache in preallocated buffers bound to the session (onnxruntime IO binding).

    `_kv[side, i]` holds tensor i (layer i // 2, key or value) flat, its first
    heads x length x head_dim values being the (1, heads, length, head_dim) tensor; a
    step reads side `_side` and writes the other, then the sides swap. The decode step's
    logits go to one reused (1, 1, vocab) buffer, the prefill's to a buffer of its own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kv = np.empty((2, len(self.past_names), 0), dtype=self.dtype)
        self._side = 0

    def prepare(self, tokens: list[int]) -> None:
        total = self._bind_step(tokens)
        past, present = self._kv[self._side], self._kv[1 - self._side]
        for n, (past_name, present_name) in enumerate(
            zip(self.past_names, self.present_names, strict=True)
        ):
            self._bind(self.binding.bind_input, past_name, past[n], self.length)
            self._bind(self.binding.bind_output, present_name, present[n], total)

    def _bind(self, method: Any, name: str, flat: np.ndarray, length: int) -> None:
        shape = [1, self.heads, length, self.head_dim]
        method(name, "cpu", 0, self.dtype.type, shape, flat.ctypes.data)

    def collect(self) -> np.ndarray:
        self._side = 1 - self._side
        return super().collect()

    def _grow(self, capacity: int) -> None:
        width = self.heads * self.head_dim
        kv = np.empty((2, len(self.past_names), width * capacity), dtype=self.dtype)
        used = width * self.length
        kv[self._side, :, :used] = self._kv[self._side, :, :used]
        self._kv, self.capacity = kv, capacity
        self._ones = np.ones((1, capacity), dtype=np.int64)


class SharedKV(_Bound):
    """The cache in one buffer per tensor, bound as both past and present (graphs with
    GroupQueryAttention only: it takes the shared buffer's capacity as the past's length
    and the valid length from the attention mask).

    `_kv[i]` is tensor i (layer i // 2, key or value) as (heads, capacity, head_dim);
    positions past `length` hold zeros or stale values the mask hides. The cache is bound
    only when the buffers change (at growth), so a step binds just its inputs and logits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kv = np.zeros((len(self.past_names), self.heads, 0, self.head_dim), self.dtype)

    def prepare(self, tokens: list[int]) -> None:
        self._bind_step(tokens)

    def _grow(self, capacity: int) -> None:
        kv = np.zeros((len(self.past_names), self.heads, capacity, self.head_dim), self.dtype)
        kv[:, :, : self.length] = self._kv[:, :, : self.length]
        self._kv, self.capacity = kv, capacity
        self._ones = np.ones((1, capacity), dtype=np.int64)
        shape = [1, self.heads, capacity, self.head_dim]
        for n, (past, present) in enumerate(zip(self.past_names, self.present_names, strict=True)):
            address = self._kv[n].ctypes.data
            self.binding.bind_input(past, "cpu", 0, self.dtype.type, shape, address)
            self.binding.bind_output(present, "cpu", 0, self.dtype.type, shape, address)
