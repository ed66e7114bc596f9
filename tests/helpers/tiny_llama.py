"""A tiny random llama in transformers' names (config.json fields and state-dict
weights as numpy arrays), for the gqa graph and conversion tests: head_dim 16, the
smallest GroupQueryAttention's rotary kernel takes."""

from __future__ import annotations

import numpy as np

from edgebench.models.onnx_graph import LlamaShape

CONFIG = {
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 96,
    "vocab_size": 40,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "max_position_embeddings": 64,
}


def tiny_weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = LlamaShape.from_config(CONFIG)
    h, kv, inter = shape.hidden, shape.kv_heads * shape.head_dim, CONFIG["intermediate_size"]

    def w(*dims: int) -> np.ndarray:
        return rng.normal(0, 0.3, dims).astype(np.float32)

    weights = {"model.embed_tokens.weight": w(shape.vocab, h), "model.norm.weight": 1 + w(h)}
    for n in range(shape.layers):
        p = f"model.layers.{n}."
        weights.update(
            {
                p + "input_layernorm.weight": 1 + w(h),
                p + "post_attention_layernorm.weight": 1 + w(h),
                p + "self_attn.q_proj.weight": w(h, h),
                p + "self_attn.k_proj.weight": w(kv, h),
                p + "self_attn.v_proj.weight": w(kv, h),
                p + "self_attn.o_proj.weight": w(h, h),
                p + "mlp.gate_proj.weight": w(inter, h),
                p + "mlp.up_proj.weight": w(inter, h),
                p + "mlp.down_proj.weight": w(h, inter),
            }
        )
    return weights
