"""What a resolved model is, as one flat dict: for `models info` and run manifests."""

from __future__ import annotations

from typing import Any

from edgebench.models.gguf import read_gguf, special_tokens
from edgebench.models.resolve import ResolvedModel


def model_info(model: ResolvedModel) -> dict[str, Any]:
    """Facts from the GGUF header plus the file's identity; JSON-serialisable."""
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
        "prompt_style": model.prompt_style,
        "vocab_size": gguf.vocab_size,
        **special_tokens(gguf.metadata),
        "gguf_version": gguf.version,
        "tensor_count": len(gguf.tensors),
        "file_size_bytes": gguf.file_size,
        "sha256": model.sha256,
        "license": entry.license if entry else gguf.metadata.get("general.license"),
        "registry_entry": entry.name if entry else None,
    }
