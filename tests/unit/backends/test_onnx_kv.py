"""The ONNX backend's KV caches on a real onnxruntime session over a tiny decoder graph
(optimum's with-past signature; its logits depend on every cached key, so a cache fed
back wrong changes them): the IO-bound buffers give the old numpy loop's logits and
cache bit for bit, across prefill, single steps and buffer growth, and the backend
decodes with them once loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.backends import onnx_kv
from edgebench.backends.base import DecodeSettings
from edgebench.backends.onnx_kv import BoundKV, NumpyKV
from edgebench.models.onnx_model import GRAPH
from tests.helpers.onnx_fakes import (
    PROMPT,
    VOCAB,
    decode_side_by_side,
    tiny_decoder_graph,
    write_tokenizer_folder,
)

LAYERS, HEADS, HEAD_DIM, TINY_VOCAB = 2, 2, 3, 11


@pytest.fixture
def session(tmp_path: Path) -> Any:
    ort = pytest.importorskip("onnxruntime")
    graph = tiny_decoder_graph(tmp_path / "g.onnx", layers=LAYERS, heads=HEADS, head_dim=HEAD_DIM)
    return ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])


def bound(session: Any, max_tokens: int | None = None) -> BoundKV:
    return BoundKV(session, LAYERS, (HEADS, HEAD_DIM), np.float32, TINY_VOCAB, max_tokens)


def cached(kv: BoundKV, index: int) -> np.ndarray:
    """Tensor `index` of the bound cache as the graph sees it."""
    flat = kv._kv[kv._side, index, : HEADS * kv.length * HEAD_DIM]
    return flat.reshape(1, HEADS, kv.length, HEAD_DIM)


def test_bound_cache_equals_the_numpy_loop_across_growth(
    session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_kv, "_FIRST_CAPACITY", 4)  # grow several times
    old = NumpyKV(session, LAYERS, (HEADS, HEAD_DIM), np.float32)
    new = bound(session)
    capacities = decode_side_by_side(old, new, [3, 1, 4, 1, 5], 40)
    assert capacities == [5, 10, 20, 40, 80]  # doubled, positions kept
    for index, name in enumerate(old.past_names):
        assert np.array_equal(cached(new, index), old.past[name])
    # A second prefill chunk after single steps (as a fast-forwarded constraint does).
    assert np.array_equal(old.forward([2, 7, 9]), new.forward([2, 7, 9]))


def test_growth_stops_at_the_request_limit(session: Any) -> None:
    kv = bound(session, max_tokens=300)
    kv.forward(list(range(10)) * 26)  # 260 tokens: more than the first buffers' 256
    assert kv.capacity == 260
    kv.forward([1])
    assert kv.capacity == 300  # doubling would give 520
    for _ in range(44):
        kv.forward([1])
    assert kv.length == 305 and kv.capacity == 305  # past the limit: exactly what is needed


def test_logits_survive_the_next_step(session: Any) -> None:
    """The returned logits are the caller's (a constraint masks them in place; the
    decode step's buffer is reused)."""
    kv = bound(session)
    first = kv.forward([1, 2])
    kept = first.copy()
    first[:] = -np.inf
    second = kv.forward([3])
    assert not np.array_equal(second, kept)
    assert np.isfinite(second).all()
    third = kv.forward([4])
    assert not np.array_equal(second, third)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    pytest.importorskip("onnxruntime")
    folder = tmp_path / "m"
    write_tokenizer_folder(folder)
    tiny_decoder_graph(folder / GRAPH, vocab=VOCAB)
    return folder


def test_loaded_backend_decodes_with_bound_buffers_as_the_old_loop_did(folder: Path) -> None:
    from edgebench.backends.onnx_runtime import OnnxBackend

    backend = OnnxBackend(str(folder), n_threads=1)
    backend.load(512)
    assert backend.vocab == VOCAB and isinstance(backend.new_session(), BoundKV)
    settings = DecodeSettings(max_tokens=40)
    new = backend.generate(PROMPT, settings)
    ids = backend.greedy_token_ids(backend.encode(PROMPT), 40)
    backend.kv_cache = backend._numpy_kv
    assert isinstance(backend.new_session(), NumpyKV)
    old = backend.generate(PROMPT, settings)
    assert new.text == old.text and new.output_tokens == old.output_tokens
    assert backend.greedy_token_ids(backend.encode(PROMPT), 40) == ids
