"""A llama-architecture decoder as one ONNX graph of onnxruntime's fused CPU operators,
built straight from the transformers weights (the `gqa` graph of `models convert`).

optimum's `text-generation-with-past` export traces the transformers code: rotary
embedding, causal mask and grouped-query `repeat_kv` come out as chains of Shape, Gather,
Unsqueeze, Concat and Expand nodes, about 7,400 nodes and 3,150 kernel launches per decode
step for SmolLM2-135M, and the per-kernel dispatch, not the arithmetic, is most of a step
(docs/performance.md). This graph writes each layer as onnxruntime's contrib operators, as
onnxruntime-genai's model builder does: SimplifiedLayerNormalization /
SkipSimplifiedLayerNormalization (RMSNorm with the residual add), the q/k/v/o and MLP
projections as MatMul (4-bit MatMulNBits after quantization), and GroupQueryAttention with
the rotary embedding inside (cos/sin tables of the graph): 13 nodes a layer.

The inputs and outputs are those of the optimum export (input_ids, attention_mask,
position_ids, past_key_values.N.key/value -> logits, present.N.key/value, the cache
(batch, kv_heads, length, head_dim)), so the backend's decode loops run either graph.
GroupQueryAttention takes positions from the attention mask (its `seqlens_k`, the index of
the last token); position_ids is accepted and unused, which is right for the backend's
unpadded single-sequence requests. The output layer is a MatMul of its own, named
"logits" (the tied embedding transposed), so the 4-bit quantizer can take it or leave it
(models/convert.py `--lm-head`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

GRAPH_KIND = "gqa"
OPSET = 17
_MS = "com.microsoft"


@dataclass(frozen=True)
class LlamaShape:
    """What the graph needs from a transformers llama config."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    rms_eps: float
    rope_theta: float
    max_positions: int

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> LlamaShape:
        heads = int(config["num_attention_heads"])
        hidden = int(config["hidden_size"])
        scaling = config.get("rope_scaling")
        if scaling and scaling.get("rope_type", scaling.get("type")) not in (None, "default"):
            raise ValueError(f"rope scaling {scaling!r} is not supported by the gqa graph")
        if config.get("attention_bias") or config.get("mlp_bias"):
            raise ValueError("projection biases are not supported by the gqa graph")
        if config.get("hidden_act", "silu") != "silu":
            raise ValueError(f"activation {config['hidden_act']!r} is not supported")
        return cls(
            layers=int(config["num_hidden_layers"]),
            hidden=hidden,
            heads=heads,
            kv_heads=int(config.get("num_key_value_heads") or heads),
            head_dim=int(config.get("head_dim") or hidden // heads),
            vocab=int(config["vocab_size"]),
            rms_eps=float(config.get("rms_norm_eps", 1e-6)),
            rope_theta=float(config.get("rope_theta", 10000.0)),
            max_positions=int(config.get("max_position_embeddings", 2048)),
        )


def rotary_tables(shape: LlamaShape) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (max_positions, head_dim / 2) of transformers' default llama rotary
    embedding (non-interleaved halves)."""
    half = np.arange(0, shape.head_dim, 2, dtype=np.int64).astype(np.float32)
    inv_freq = 1.0 / (shape.rope_theta ** (half / shape.head_dim))
    angles = np.outer(np.arange(shape.max_positions, dtype=np.float32), inv_freq)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def build_llama(weights: Mapping[str, np.ndarray], config: Mapping[str, Any]) -> Any:
    """The onnx ModelProto of the llama decoder with `weights` (transformers' state dict
    names, float32 numpy arrays; `lm_head.weight` may be absent when tied)."""
    from onnx import TensorProto, helper, numpy_helper

    shape = LlamaShape.from_config(config)
    nodes: list[Any] = []
    inits: list[Any] = []

    def init(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], outputs: list[str], domain: str = "", **attrs: Any):
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], domain=domain, **attrs))
        return outputs[0]

    def linear(x: str, weight_name: str, out: str) -> str:
        # transformers' Linear computes x @ W.T; MatMul wants W.T as its B.
        return node("MatMul", [x, init(weight_name, weights[weight_name].T)], [out])

    def rms(x: str, weight_name: str, out: str) -> str:
        w = init(weight_name, weights[weight_name])
        return node("SimplifiedLayerNormalization", [x, w], [out], axis=-1, epsilon=shape.rms_eps)

    def skip_rms(x: str, skip: str, weight_name: str, out: str) -> tuple[str, str]:
        """RMSNorm(x + skip) and x + skip (the residual stream)."""
        w = init(weight_name, weights[weight_name])
        node(
            "SkipSimplifiedLayerNormalization",
            [x, skip, w],
            [out, "", "", f"{out}/sum"],
            domain=_MS,
            epsilon=shape.rms_eps,
        )
        return out, f"{out}/sum"

    float_kv = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"]),
    ]
    outputs = [
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", shape.vocab])
    ]
    past = ["batch", shape.kv_heads, "past", shape.head_dim]
    present = ["batch", shape.kv_heads, "total", shape.head_dim]
    for n in range(shape.layers):
        for kind in ("key", "value"):
            name = f"past_key_values.{n}.{kind}"
            inputs.append(helper.make_tensor_value_info(name, float_kv, past))
            outputs.append(helper.make_tensor_value_info(f"present.{n}.{kind}", float_kv, present))

    # GroupQueryAttention's lengths, from the mask: the last token's index per sequence
    # and the total length (past + new).
    one = init("const/one", np.array([1], dtype=np.int64))
    node("ReduceSum", ["attention_mask", one], ["mask/sum"], keepdims=0)
    node("Sub", ["mask/sum", one], ["mask/last"])
    seqlens = node("Cast", ["mask/last"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask/shape"])
    node("Gather", ["mask/shape", init("const/axis1", np.array(1, dtype=np.int64))], ["mask/len"])
    total = node("Cast", ["mask/len"], ["total_sequence_length"], to=TensorProto.INT32)
    cos, sin = rotary_tables(shape)
    cos_name, sin_name = init("rotary/cos", cos), init("rotary/sin", sin)

    embed = weights["model.embed_tokens.weight"]
    x = node("Gather", [init("model.embed_tokens.weight", embed), "input_ids"], ["embed"])
    prefix = "model.layers.{}."
    normed = rms(x, prefix.format(0) + "input_layernorm.weight", "layers.0/in_norm")
    residual = x
    scale = float(shape.head_dim) ** -0.5
    for n in range(shape.layers):
        p = prefix.format(n)
        q = linear(normed, p + "self_attn.q_proj.weight", f"layers.{n}/q")
        k = linear(normed, p + "self_attn.k_proj.weight", f"layers.{n}/k")
        v = linear(normed, p + "self_attn.v_proj.weight", f"layers.{n}/v")
        attn_inputs = [q, k, v, f"past_key_values.{n}.key", f"past_key_values.{n}.value"]
        node(
            "GroupQueryAttention",
            [*attn_inputs, seqlens, total, cos_name, sin_name],
            [f"layers.{n}/attn", f"present.{n}.key", f"present.{n}.value"],
            domain=_MS,
            num_heads=shape.heads,
            kv_num_heads=shape.kv_heads,
            do_rotary=1,
            rotary_interleaved=0,
            scale=scale,
        )
        o = linear(f"layers.{n}/attn", p + "self_attn.o_proj.weight", f"layers.{n}/o")
        normed, residual = skip_rms(
            o, residual, p + "post_attention_layernorm.weight", f"layers.{n}/post_norm"
        )
        gate = linear(normed, p + "mlp.gate_proj.weight", f"layers.{n}/gate")
        up = linear(normed, p + "mlp.up_proj.weight", f"layers.{n}/up")
        node("Sigmoid", [gate], [f"layers.{n}/gate_sigmoid"])
        node("Mul", [gate, f"layers.{n}/gate_sigmoid"], [f"layers.{n}/silu"])
        node("Mul", [f"layers.{n}/silu", up], [f"layers.{n}/act"])
        down = linear(f"layers.{n}/act", p + "mlp.down_proj.weight", f"layers.{n}/down")
        last = n == shape.layers - 1
        next_norm = "model.norm.weight" if last else prefix.format(n + 1) + "input_layernorm.weight"
        name = "final_norm" if last else f"layers.{n + 1}/in_norm"
        normed, residual = skip_rms(down, residual, next_norm, name)
    head = weights.get("lm_head.weight", embed)
    # Its own initializer even when tied: MatMul needs it transposed, and the quantizer
    # only takes MatMuls with a constant weight.
    node("MatMul", [normed, init("lm_head.weight", head.T)], ["logits"])

    graph = helper.make_graph(nodes, "edgebench-llama-gqa", inputs, outputs, initializer=inits)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(_MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="edgebench")
    model.ir_version = 8
    return model
