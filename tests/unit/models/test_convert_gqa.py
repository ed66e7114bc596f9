"""`models convert` writing the gqa graph (models/onnx_graph.py), end to end without
torch or the network: transformers' step is faked by a tiny random llama folder; the graph,
the real 4-bit quantizer, the provenance and the run record's model block are not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.onnx_runtime import OnnxBackend
from edgebench.errors import UserError
from edgebench.models import convert as convert_module
from edgebench.models.fetch import pull
from edgebench.runner.prepare import model_under_test
from tests.helpers.gguf_factory import setup_tiny_model
from tests.helpers.tiny_llama import CONFIG, tiny_weights


def fake_transformers_folder(gguf: Path, hf_dir: Path) -> None:
    """What transformers saves for a tied llama: config, safetensors without lm_head, and
    a tokenizer."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models

    hf_dir.mkdir(parents=True)
    (hf_dir / "config.json").write_text(json.dumps({**CONFIG, "tie_word_embeddings": True}))
    save_file(tiny_weights(), str(hf_dir / "model.safetensors"))
    vocab = {f"t{i}": i for i in range(CONFIG["vocab_size"])}
    Tokenizer(models.WordLevel(vocab, unk_token="t0")).save(str(hf_dir / "tokenizer.json"))
    (hf_dir / "tokenizer_config.json").write_text("{}")


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    for module in ("onnx", "onnxruntime", "safetensors", "tokenizers"):
        pytest.importorskip(module)
    setup_tiny_model(monkeypatch, tmp_path)
    pull("tiny")
    monkeypatch.setattr(convert_module, "check_convert_extras", lambda: None)
    monkeypatch.setattr(convert_module, "gguf_to_transformers", fake_transformers_folder)
    return "tiny"


def greedy_both_loops(folder: Path) -> list[list[int]]:
    backend = OnnxBackend(str(folder), n_threads=1)
    backend.load(64)
    runs = []
    for make in (backend._numpy_kv, backend._shared_kv):
        backend.kv_cache = make
        runs.append(backend.greedy_token_ids([3, 1, 4, 1, 5], 20))
    backend.close()
    return runs


@pytest.mark.parametrize("lm_head", ["float32", "int4"])
def test_int4_gqa_conversion_records_its_graph_and_output_layer(tiny: str, lm_head: str) -> None:
    import onnx

    model = convert_module.convert(tiny, "int4", lm_head=lm_head, say=lambda _: None)
    export, quant = model.provenance["export"], model.provenance["quantization"]
    assert export["graph"] == "gqa" and "gqa_graph" in export["steps_s"]
    assert quant == {
        "method": "MatMulNBits",
        "bits": 4,
        "block_size": 32,
        "symmetric": True,
        "lm_head": lm_head,
    }
    graph = onnx.load(str(model.graph))
    ops = [node.op_type for node in graph.graph.node]
    assert ops.count("GroupQueryAttention") == CONFIG["num_hidden_layers"]
    # Every projection is 4-bit; the output layer as asked.
    logits = next(node for node in graph.graph.node if "logits" in node.output)
    assert logits.op_type == ("MatMul" if lm_head == "float32" else "MatMulNBits")
    assert ops.count("MatMul") == (1 if lm_head == "float32" else 0)
    assert {p.name for p in (model.folder).iterdir()} >= {"tokenizer.json", "config.json"}
    # The run record's model block carries the provenance.
    record = model_under_test(str(model.folder)).details["onnx"]
    assert record["export"]["graph"] == "gqa" and record["quantization"]["lm_head"] == lm_head
    # Every decode loop gives the same greedy tokens on the converted graph.
    old, new = greedy_both_loops(model.folder)
    assert old == new and len(new) == 20


def test_fp32_gqa_graph_is_reused_and_a_graph_change_converts_again(tiny: str) -> None:
    said: list[str] = []
    fp32 = convert_module.convert(tiny, "fp32", say=said.append)
    assert fp32.provenance["export"]["graph"] == "gqa" and fp32.provenance["quantization"] is None
    int4 = convert_module.convert(tiny, "int4", say=said.append)
    assert int4.provenance["export"]["from"] == "tiny@onnx-fp32"
    assert any("starting from the converted tiny@onnx-fp32" in line for line in said)
    again = convert_module.convert(tiny, "int4", say=said.append)
    assert "already converted" in said[-1] and again.sha256 == int4.sha256


def test_unknown_graph_and_unsupported_architecture_are_one_line_errors(
    tiny: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UserError, match=r"^--graph: 'fused' is not one of: gqa, optimum$"):
        convert_module.convert(tiny, "int4", graph="fused")
    with pytest.raises(UserError, match=r"^--lm-head: 'int8' is not one of: float32, int4$"):
        convert_module.convert(tiny, "int4", lm_head="int8")
    message = r"^--lm-head int4 needs --precision int4 and the gqa graph$"
    for precision, graph in (("fp32", None), ("int4", "optimum")):
        with pytest.raises(UserError, match=message):
            convert_module.convert(tiny, precision, graph=graph, lm_head="int4")

    def biased(gguf: Path, hf_dir: Path) -> None:
        fake_transformers_folder(gguf, hf_dir)
        config: dict[str, Any] = json.loads((hf_dir / "config.json").read_text())
        (hf_dir / "config.json").write_text(json.dumps({**config, "attention_bias": True}))

    monkeypatch.setattr(convert_module, "gguf_to_transformers", biased)
    with pytest.raises(UserError) as error:
        convert_module.convert(tiny, "int4", say=lambda _: None)
    assert str(error.value) == (
        "cannot write the gqa graph: projection biases are not supported by the gqa graph: "
        "try --graph optimum"
    )


def test_the_default_graph_follows_the_architecture(
    tiny: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from edgebench.models.onnx_model import default_graph

    assert default_graph("llama") == "gqa"
    assert default_graph("gemma3") == default_graph(None) == "optimum"
    monkeypatch.setattr(
        convert_module, "read_gguf", lambda _: SimpleNamespace(architecture="gemma3")
    )
    with pytest.raises(UserError) as error:
        convert_module.convert(tiny, "int4", graph="gqa", say=lambda _: None)
    assert str(error.value) == (
        "'tiny': the gqa graph is written for the llama architecture, not 'gemma3': "
        "convert with --graph optimum"
    )


def test_an_optimum_folder_is_converted_again_for_the_default_graph(tiny: str) -> None:
    """A folder converted before the gqa graph (no export.graph) is optimum's: without
    --graph a llama model is converted again as gqa; with --graph optimum it is kept."""
    first = convert_module.convert(tiny, "int4", say=lambda _: None)
    provenance_file = first.folder / "edgebench-onnx.json"
    provenance = json.loads(provenance_file.read_text())
    del provenance["export"]["graph"]
    provenance_file.write_text(json.dumps(provenance))
    said: list[str] = []
    kept = convert_module.convert(tiny, "int4", graph="optimum", say=said.append)
    assert said == [f"tiny@onnx-int4: already converted: {first.folder} (--force converts again)"]
    assert kept.graph_kind == "optimum"
    again = convert_module.convert(tiny, "int4", say=said.append)
    assert said[1] == (
        "tiny@onnx-int4: converted otherwise (optimum graph, lm_head float32); converting again"
    )
    assert again.graph_kind == "gqa"
    said.clear()
    head = convert_module.convert(tiny, "int4", lm_head="int4", say=said.append)
    assert said[0].endswith("converted otherwise (gqa graph, lm_head float32); converting again")
    assert head.provenance["quantization"]["lm_head"] == "int4"
