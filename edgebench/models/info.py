"""What a resolved model is, as one flat dict: for `models info` and run manifests."""

from __future__ import annotations

from typing import Any

from edgebench.models.gguf import read_gguf
from edgebench.models.openvino_model import RUNTIME as OPENVINO_FORMAT
from edgebench.models.registry import tuning_of
from edgebench.models.resolve import ResolvedModel


def model_info(model: ResolvedModel) -> dict[str, Any]:
    """Facts from the GGUF header (or a converted model's provenance file) plus the
    file's identity; JSON-serialisable."""
    if model.onnx is not None:
        return _onnx_info(model)
    if model.openvino is not None and model.openvino.provenance is not None:
        return _openvino_info(model, model.openvino.provenance)
    gguf = read_gguf(model.path)
    entry = model.entry
    return {
        "label": model.label,
        "spec": model.spec,
        "path": str(model.path),
        "architecture": gguf.architecture,
        "name": gguf.name,
        "parameter_count": gguf.parameter_count,
        "quantization": gguf.quantization,
        "context_length": gguf.context_length,
        "chat_template": gguf.chat_template is not None,
        "tuning": tuning_of(entry, gguf.chat_template is not None),
        "prompt_style": model.prompt_style,
        "vocab_size": gguf.vocab_size,
        **gguf.special_tokens(),
        "gguf_version": gguf.version,
        "tensor_count": len(gguf.tensors),
        "file_size_bytes": gguf.file_size,
        "sha256": model.sha256,
        "license": entry.license if entry else gguf.license,
        "registry_entry": entry.name if entry else None,
        **_quantized_info(model),
    }


def _quantized_info(model: ResolvedModel) -> dict[str, Any]:
    """What a variant made by `models quantize` was made from (nothing for other files)."""
    if model.quantized is None:
        return {}
    source = model.quantized.source
    return {
        "quantized_from": source.get("name"),
        "source_quantization": source.get("quantization"),
        "source_sha256": source.get("sha256"),
        "note": model.quantized.note,
    }


def _onnx_info(model: ResolvedModel) -> dict[str, Any]:
    assert model.onnx is not None
    p = model.onnx.provenance
    source = p.get("source") or {}
    tools = p.get("tools") or {}
    quant = p.get("quantization")
    return {
        "label": model.label,
        "spec": model.spec,
        "path": str(model.path),
        "format": "onnx",
        "precision": p.get("precision"),
        "quantization": (
            f"{quant['method']} {quant['bits']}-bit, block {quant['block_size']}, "
            + ("symmetric" if quant.get("symmetric") else "asymmetric")
            if quant
            else None
        ),
        "architecture": source.get("architecture"),
        "parameter_count": source.get("parameters"),
        "context_length": p.get("context_length"),
        "chat_template": bool((p.get("prompt") or {}).get("chat_template")),
        "tuning": tuning_of(model.entry, bool((p.get("prompt") or {}).get("chat_template"))),
        "prompt_style": model.prompt_style,
        "vocab_size": (p.get("tokens") or {}).get("vocab_size"),
        "file_size_bytes": model.size_bytes,
        "sha256": model.sha256,
        "source_file": source.get("file"),
        "source_sha256": source.get("sha256"),
        "source_quantization": source.get("quantization"),
        "converted_at": p.get("created_at"),
        "tools": ", ".join(f"{k} {v}" for k, v in tools.items() if v),
        "license": model.entry.license if model.entry else None,
        "registry_entry": model.entry.name if model.entry else None,
    }


def _openvino_info(model: ResolvedModel, p: dict[str, Any]) -> dict[str, Any]:
    """An exported OpenVINO folder, from its provenance file (as ONNX folders are)."""
    source = p.get("source") or {}
    tools = p.get("tools") or {}
    quant = p.get("quantization") or {}
    prompt = p.get("prompt") or {}
    template = bool(prompt.get("chat_template"))
    return {
        "label": model.label,
        "spec": model.spec,
        "path": str(model.path),
        "format": OPENVINO_FORMAT,
        "precision": p.get("precision"),
        "quantization": quant.get("method"),
        "architecture": source.get("architecture"),
        "parameter_count": source.get("parameters"),
        "context_length": p.get("context_length"),
        "chat_template": template,
        "tuning": tuning_of(model.entry, template),
        "prompt_style": model.prompt_style,
        "vocab_size": (p.get("tokens") or {}).get("vocab_size"),
        "file_size_bytes": model.size_bytes,
        "sha256": model.sha256,
        "source_file": source.get("file"),
        "source_sha256": p.get("source_gguf_sha256"),
        "source_quantization": source.get("quantization"),
        "converted_at": p.get("created_at"),
        "tools": ", ".join(f"{k} {v}" for k, v in tools.items() if v),
        "license": model.entry.license if model.entry else None,
        "registry_entry": model.entry.name if model.entry else None,
    }
