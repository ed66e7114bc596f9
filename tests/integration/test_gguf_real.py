"""The pure-Python GGUF reader on the real SmolLM2 file (header only, no weights loaded)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from edgebench.models.gguf import GGUFFile, Unread, kv_cache_bytes_per_token, read_gguf

# Every field edgebench reads from the header, as the reader before issue 25 (which built
# every array in memory, edgebench 2cd4930) read them from SmolLM2-135M-Instruct.Q4_1.gguf.
READ_BEFORE: dict[str, Any] = {
    "architecture": "llama",
    "name": "Smollm2 135M 8k Lc100K Mix1 Ep2",
    "license": "apache-2.0",
    "quantization": "Q4_1",
    "context_length": 8192,
    "vocab_size": 49152,
    "parameter_count": 134515008,
    "version": 3,
    "tensor_count": 272,
    "file_size": 98362432,
    "chat_template_sha256": "872be49dbb638044ad01b60388f48d469ff2980e5f0dccdc22ec907db54d0788",
    "special_tokens": {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"},
    "kv_bytes_per_token": 23040,
    "end_of_generation_ids": [0, 2],
    "add_bos_token": False,
    "bos_id": 1,
    "eos_id": 2,
    # name, dims, type and offset of every tensor
    "tensors_sha256": "3d682f2929dcfaca61b7962c2faf75e9153b7efbf2ce71ca770de2badb41fe68",
}


def fields_read(gguf: GGUFFile) -> dict[str, Any]:
    template = gguf.chat_template or ""
    tensors = [(t.name, t.dims, t.ggml_type, t.offset) for t in gguf.tensors]
    return {
        "architecture": gguf.architecture,
        "name": gguf.name,
        "license": gguf.license,
        "quantization": gguf.quantization,
        "context_length": gguf.context_length,
        "vocab_size": gguf.vocab_size,
        "parameter_count": gguf.parameter_count,
        "version": gguf.version,
        "tensor_count": len(gguf.tensors),
        "file_size": gguf.file_size,
        "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest(),
        "special_tokens": gguf.special_tokens(),
        "kv_bytes_per_token": kv_cache_bytes_per_token(gguf.metadata),
        "end_of_generation_ids": gguf.end_of_generation_ids(),
        "add_bos_token": gguf.add_bos_token,
        "bos_id": gguf.token_id("bos"),
        "eos_id": gguf.token_id("eos"),
        "tensors_sha256": hashlib.sha256(repr(tensors).encode()).hexdigest(),
    }


@pytest.mark.model
def test_real_smollm2_metadata(smollm2: Path) -> None:
    # `smollm2` (tests/conftest.py) skips without the pulled file, and fails in CI.
    gguf: GGUFFile = read_gguf(smollm2)
    assert gguf.architecture == "llama"
    assert gguf.chat_template and "<|im_start|>" in gguf.chat_template
    assert gguf.quantization == "Q4_1"
    assert gguf.vocab_size == 49152
    assert gguf.special_tokens()["eos_token"] == "<|im_end|>"


@pytest.mark.model
def test_the_streaming_reader_reads_what_the_old_one_read(smollm2: Path) -> None:
    gguf = read_gguf(smollm2)
    assert fields_read(gguf) == READ_BEFORE
    # What it no longer holds: the vocabulary, token types, merges and languages.
    unread = {k: v for k, v in gguf.metadata.items() if isinstance(v, Unread)}
    assert unread == {
        "general.languages": Unread("array of string", 1),
        "tokenizer.ggml.tokens": Unread("array of string", 49152),
        "tokenizer.ggml.token_type": Unread("array of int32", 49152),
        "tokenizer.ggml.merges": Unread("array of string", 48900),
    }
