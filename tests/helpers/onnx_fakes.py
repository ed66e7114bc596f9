"""Converted ONNX folders without a real model: a one-node graph as `models convert`
would leave it, and an ONNX backend whose InferenceSession is a fixed logits table
(the tokenizer is real, byte-level).

onnx and tokenizers are optional extras: each function skips the calling test when the
one it needs is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.models.onnx_model import FORMAT, GRAPH, PROVENANCE, TOKENIZER

# --- a tiny graph in a converted folder ----------------------------------------------------


def tiny_onnx_graph(folder: Path, *, location: str | None = None, in_node: bool = False) -> Path:
    """A one-node ONNX graph (Y = X + W) at folder/GRAPH; with `location`, W's bytes live
    in that (external data) file; with `in_node`, W sits in a Constant node's attribute
    instead of the initializers."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    weight = numpy_helper.from_array(np.arange(4, dtype=np.float32), name="W")
    if location is not None:
        weight.ClearField("raw_data")
        weight.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", "0"), ("length", "16")):
            entry = weight.external_data.add()
            entry.key, entry.value = key, value
    nodes = [helper.make_node("Add", ["X", "W"], ["Y"])]
    initializers = [weight]
    if in_node:
        nodes.insert(0, helper.make_node("Constant", [], ["W"], value=weight))
        initializers = []
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])],
        initializers,
    )
    path = folder / GRAPH
    path.write_bytes(helper.make_model(graph).SerializeToString())
    return path


def fake_converted(cache: Path, base: str = "smollm2-135m-instruct", precision: str = "int4"):
    """A converted folder in the model cache `cache` as `models convert` leaves it, with
    the tiny graph and a provenance file that matches it."""
    from edgebench.models.hashing import sha256_file

    folder = cache / "models" / "onnx" / f"{base}-{precision}"
    graph = tiny_onnx_graph(folder)
    provenance = {
        "format": FORMAT,
        "name": f"{base}@onnx-{precision}",
        "base_model": base,
        "precision": precision,
        "source": {"sha256": "0" * 64, "architecture": "llama", "parameters": 1},
        "weights": {
            "file": GRAPH,
            "sha256": sha256_file(graph),
            "size_bytes": graph.stat().st_size,
            "external_data": [],
        },
        "quantization": None,
        "context_length": 2048,
        "kv_cache": {"dtype": "float32", "bytes_per_token": 46080},
        "prompt": {"style": "chat", "chat_template": "{{ messages[0]['content'] }}", "stop": []},
        "tokens": {"add_bos": False, "bos_id": 1, "eos_id": 2, "eog_ids": [2], "vocab_size": 8},
        "tools": {"onnxruntime": "1.31.1"},
    }
    (folder / PROVENANCE).write_text(json.dumps(provenance))
    return folder


# --- an ONNX backend on a logits table -----------------------------------------------------

VOCAB = 257  # the 256 byte-level symbols and <eos>
EOS = 256
PROMPT = "Answer in JSON:"


class TableSession:
    """An InferenceSession whose logits at each position depend only on that position's
    token (row `token` of `table`); the KV cache grows as the real graph's would."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table
        self.calls = 0

    def run(self, names: list[str], feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.calls += 1
        ids = feed["input_ids"][0]
        past = feed["past_key_values.0.key"].shape[2]
        kv = np.zeros((1, 1, past + len(ids), 1), dtype=np.float32)
        return [self.table[ids][None], kv, kv]


def write_tokenizer_folder(folder: Path) -> None:
    """A converted folder without a graph: the provenance file and a byte-level BPE
    tokenizer.json (what the backend reads besides the graph)."""
    tokenizers = pytest.importorskip("tokenizers")
    folder.mkdir(parents=True)
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tokenizers.decoders.ByteLevel()
    tokenizer.add_special_tokens(["<eos>"])
    assert tokenizer.token_to_id("<eos>") == EOS
    tokenizer.save(str(folder / TOKENIZER))
    provenance = {
        "format": FORMAT,
        "name": "tiny@onnx-fp32",
        "precision": "fp32",
        "weights": {"file": GRAPH, "sha256": "0" * 64, "size_bytes": 1, "external_data": []},
        "context_length": 512,
        "prompt": {"style": "completion", "stop": []},
        "tokens": {"add_bos": False, "eos_id": EOS, "eog_ids": [EOS], "vocab_size": VOCAB},
    }
    (folder / PROVENANCE).write_text(json.dumps(provenance))


def backend_for_table(folder: Path, table: np.ndarray, mode: str = "none") -> Any:
    """An `OnnxBackend` on a new folder whose session answers from `table`, loaded (one
    layer, a 512-token context) without onnxruntime."""
    from edgebench.backends.onnx_runtime import OnnxBackend

    write_tokenizer_folder(folder)
    backend = OnnxBackend(str(folder), n_threads=1, constraint_mode=mode)
    backend.session = TableSession(table)
    backend.layers, backend.kv_shape, backend.n_ctx = 1, (1, 1), 512
    backend.encode(PROMPT)  # loads the tokenizer
    if mode != "none":
        backend._load_llguidance()
    return backend


# --- a tiny decoder graph with a KV cache ---------------------------------------------------


def tiny_decoder_graph(
    path: Path,
    *,
    layers: int = 2,
    heads: int = 2,
    head_dim: int = 3,
    vocab: int = 11,
) -> Path:
    """A graph with optimum's with-past signature whose logits depend on the whole cache:
    each layer's present key/value is Concat(past, the new tokens' embedding), and the
    logits are the new token's embedding plus the sum of every cached key, projected to
    the vocabulary, plus a per-position bias. A cache fed back wrong changes the tokens."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    width = heads * head_dim
    weights = {
        "E": rng.normal(size=(vocab, width)).astype(np.float32),
        "W": rng.normal(size=(width, vocab)).astype(np.float32),
        "P": rng.normal(scale=0.1, size=(4096, vocab)).astype(np.float32),
        "new_shape": np.array([1, -1, heads, head_dim], dtype=np.int64),
        "flat_shape": np.array([1, 1, width], dtype=np.int64),
        "axis2": np.array([2], dtype=np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["emb"]),  # (1, n, width)
        helper.make_node("Reshape", ["emb", "new_shape"], ["emb4"]),
        helper.make_node("Transpose", ["emb4"], ["new_kv"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["emb", "W"], ["token_logits"]),  # (1, n, vocab)
        helper.make_node("Gather", ["P", "position_ids"], ["position_bias"]),
        helper.make_node("Add", ["token_logits", "position_bias"], ["logits0"]),
    ]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "n"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "n"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "n", vocab])]
    last = "logits0"
    for n in range(layers):
        for kind in ("key", "value"):
            past, present = f"past_key_values.{n}.{kind}", f"present.{n}.{kind}"
            shape = [1, heads, "past", head_dim]
            inputs.append(helper.make_tensor_value_info(past, TensorProto.FLOAT, shape))
            outputs.append(
                helper.make_tensor_value_info(present, TensorProto.FLOAT, [1, heads, "t", head_dim])
            )
            nodes.append(helper.make_node("Concat", [past, "new_kv"], [present], axis=2))
        summed, flat, context = f"sum{n}", f"flat{n}", f"context{n}"
        nodes += [
            helper.make_node("ReduceSum", [f"present.{n}.key", "axis2"], [summed], keepdims=0),
            helper.make_node("Reshape", [summed, "flat_shape"], [flat]),
            helper.make_node("MatMul", [flat, "W"], [context]),
            helper.make_node("Add", [last, context], [f"logits{n + 1}"]),
        ]
        last = f"logits{n + 1}"
    nodes.append(helper.make_node("Identity", [last], ["logits"]))
    initializers = [numpy_helper.from_array(value, name) for name, value in weights.items()]
    graph = helper.make_graph(nodes, "decoder", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def decode_side_by_side(old: Any, new: Any, prompt: list[int], steps: int) -> list[int]:
    """Greedy decoding with two KV caches at once, asserting bit-equal logits at every
    step; the capacities the second one went through (sorted)."""
    old_logits, new_logits = old.forward(prompt), new.forward(prompt)
    capacities = {new.capacity}
    for _ in range(steps):
        assert np.array_equal(old_logits, new_logits)
        token = int(np.argmax(old_logits))
        old_logits, new_logits = old.forward([token]), new.forward([token])
        capacities.add(new.capacity)
    assert new.length == old.length == len(prompt) + steps
    return sorted(capacities)
