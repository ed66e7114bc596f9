"""The gqa graph (models/onnx_graph.py) on a tiny random llama: its logits and KV cache
equal a plain numpy llama (transformers' formulas: RMSNorm, non-interleaved rotary
halves, grouped-query heads, SiLU MLP, tied output layer), at the prefill and at single
decode steps fed the cache back, through the backend's old and IO-bound loops alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.backends import onnx_kv
from edgebench.backends.onnx_kv import BoundKV, NumpyKV, SharedKV
from edgebench.models.onnx_graph import LlamaShape, build_llama, rotary_tables
from tests.helpers.onnx_fakes import decode_side_by_side
from tests.helpers.tiny_llama import CONFIG, tiny_weights


def reference(weights: dict[str, np.ndarray], ids: list[int]) -> tuple[np.ndarray, list[Any]]:
    """Logits of every position and each layer's (key, value) (1, kv_heads, n, head_dim)."""
    shape = LlamaShape.from_config(CONFIG)
    eps, hd = shape.rms_eps, shape.head_dim
    cos, sin = rotary_tables(shape)
    n = len(ids)
    cos, sin = np.concatenate([cos[:n]] * 2, -1), np.concatenate([sin[:n]] * 2, -1)

    def rms(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def rope(x: np.ndarray) -> np.ndarray:  # (heads, n, hd)
        rotated = np.concatenate([-x[..., hd // 2 :], x[..., : hd // 2]], -1)
        return x * cos + rotated * sin

    x = weights["model.embed_tokens.weight"][ids]
    cache = []
    group = shape.heads // shape.kv_heads
    causal = np.triu(np.full((n, n), -np.inf, dtype=np.float32), 1)
    for layer in range(shape.layers):
        p = f"model.layers.{layer}."
        h = rms(x, weights[p + "input_layernorm.weight"])
        q = (h @ weights[p + "self_attn.q_proj.weight"].T).reshape(n, shape.heads, hd)
        k = (h @ weights[p + "self_attn.k_proj.weight"].T).reshape(n, shape.kv_heads, hd)
        v = (h @ weights[p + "self_attn.v_proj.weight"].T).reshape(n, shape.kv_heads, hd)
        q, k, v = rope(q.transpose(1, 0, 2)), rope(k.transpose(1, 0, 2)), v.transpose(1, 0, 2)
        cache.append((k[None], v[None]))
        kk, vv = np.repeat(k, group, 0), np.repeat(v, group, 0)
        scores = q @ kk.transpose(0, 2, 1) / np.sqrt(hd) + causal
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        attn = (probs @ vv).transpose(1, 0, 2).reshape(n, -1)
        x = x + attn @ weights[p + "self_attn.o_proj.weight"].T
        h = rms(x, weights[p + "post_attention_layernorm.weight"])
        gate = h @ weights[p + "mlp.gate_proj.weight"].T
        up = h @ weights[p + "mlp.up_proj.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ weights[p + "mlp.down_proj.weight"].T
    logits = rms(x, weights["model.norm.weight"]) @ weights["model.embed_tokens.weight"].T
    return logits, cache


@pytest.fixture
def session(tmp_path: Path) -> tuple[Any, dict[str, np.ndarray]]:
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    weights = tiny_weights()
    path = tmp_path / "model.onnx"
    path.write_bytes(build_llama(weights, CONFIG).SerializeToString())
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]), weights


def test_gqa_graph_equals_the_numpy_llama(session: tuple[Any, dict[str, np.ndarray]]) -> None:
    sess, weights = session
    ids = [3, 17, 5, 9, 31, 2, 8]
    expected, expected_cache = reference(weights, ids)
    kv = NumpyKV(sess, 2, (2, 16), np.float32)
    prompt = 4
    got = [kv.forward(ids[:prompt])]  # a prefill, then single decode steps
    for token in ids[prompt:]:
        got.append(kv.forward([token]))
    np.testing.assert_allclose(np.stack(got), expected[prompt - 1 :], atol=1e-4, rtol=1e-4)
    for layer, (key, value) in enumerate(expected_cache):
        np.testing.assert_allclose(kv.past[f"past_key_values.{layer}.key"], key, atol=1e-5)
        np.testing.assert_allclose(kv.past[f"past_key_values.{layer}.value"], value, atol=1e-5)


def test_both_loops_give_the_same_greedy_tokens_on_the_gqa_graph(
    session: tuple[Any, dict[str, np.ndarray]],
) -> None:
    sess, _ = session
    runs = []
    for kv in (NumpyKV(sess, 2, (2, 16), np.float32), BoundKV(sess, 2, (2, 16), np.float32, 40)):
        logits, ids = kv.forward([1, 2, 3]), []
        for _ in range(40):
            ids.append(int(np.argmax(logits)))
            logits = kv.forward([ids[-1]])
        runs.append(ids)
    assert runs[0] == runs[1]


def test_shared_buffer_loop_gives_the_numpy_loops_logits_across_growth(
    session: tuple[Any, dict[str, np.ndarray]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GroupQueryAttention reading and writing one buffer per tensor: bit for bit the old
    loop's logits and cache, through prefills, single steps and buffer growth."""
    monkeypatch.setattr(onnx_kv, "_FIRST_CAPACITY", 4)
    sess, _ = session
    old = NumpyKV(sess, 2, (2, 16), np.float32)
    new = SharedKV(sess, 2, (2, 16), np.float32, 40)
    assert decode_side_by_side(old, new, [3, 1, 4, 1, 5], 40) == [5, 10, 20, 40, 80]
    for index, name in enumerate(old.past_names):
        assert np.array_equal(new._kv[index, :, : new.length][None], old.past[name])
    assert np.array_equal(old.forward([2, 7, 9]), new.forward([2, 7, 9]))
