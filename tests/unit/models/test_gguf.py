"""The pure-Python GGUF reader on well-formed files: values, tensors, derived facts.
(Hostile and corrupt files: test_gguf_hostile.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.models.gguf import quantization_name, read_gguf, special_tokens
from tests.helpers.gguf_factory import (
    ARRAY,
    BOOL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    Typed,
    sample_metadata,
    write_gguf,
)


def test_reads_every_value_type(tmp_path: Path) -> None:
    meta = {
        "u8": Typed(UINT8, 255),
        "i8": Typed(INT8, -128),
        "u16": Typed(UINT16, 65535),
        "i16": Typed(INT16, -32768),
        "u32": Typed(UINT32, 2**32 - 1),
        "i32": Typed(INT32, -(2**31)),
        "u64": Typed(UINT64, 2**64 - 1),
        "i64": Typed(INT64, -(2**63)),
        "f32": Typed(FLOAT32, 0.5),
        "f64": Typed(FLOAT64, 1e300),
        "yes": Typed(BOOL, True),
        "text": "héllo ✓",
        "empty": "",
        "ints": Typed(ARRAY, [1, -2, 3], INT64),
        "words": ["a", "", "ü"],
        "nested": [[1, 2], [3]],
        "no_items": Typed(ARRAY, [], STRING),
    }
    gguf = read_gguf(write_gguf(tmp_path / "m.gguf", meta))
    expected = {k: (v.value if isinstance(v, Typed) else v) for k, v in meta.items()}
    assert gguf.metadata == expected
    assert gguf.version == 3
    assert gguf.tensors == []


def test_tensors_give_the_parameter_count(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", {"a": 1}, tensors=[("w", (3, 5)), ("b", (7,))])
    gguf = read_gguf(path)
    assert [(t.name, t.dims) for t in gguf.tensors] == [("w", (3, 5)), ("b", (7,))]
    assert gguf.parameter_count == 22


def test_declared_parameter_count_wins(tmp_path: Path) -> None:
    meta = {"general.parameter_count": Typed(UINT64, 135_000_000)}
    path = write_gguf(tmp_path / "m.gguf", meta, tensors=[("w", (3, 5))])
    assert read_gguf(path).parameter_count == 135_000_000


def test_derived_facts(tmp_path: Path) -> None:
    gguf = read_gguf(write_gguf(tmp_path / "m.gguf"))
    assert gguf.architecture == "llama"
    assert gguf.name == "Tiny Test Model"
    assert gguf.quantization == "Q4_1"
    assert gguf.context_length == 2048
    assert gguf.vocab_size == 8
    assert gguf.chat_template is not None and "<|im_start|>" in gguf.chat_template
    assert gguf.parameter_count == 36
    assert special_tokens(gguf.metadata) == {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}


def test_version_2_and_no_chat_template(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", sample_metadata(chat=False), version=2)
    gguf = read_gguf(path)
    assert gguf.version == 2
    assert gguf.chat_template is None


@pytest.mark.parametrize(
    ("file_type", "name"),
    [(0, "F32"), (1, "F16"), (3, "Q4_1"), (7, "Q8_0"), (15, "Q4_K_M"), (18, "Q6_K"), (32, "BF16")],
)
def test_quantization_names(file_type: int, name: str) -> None:
    assert quantization_name({"general.file_type": file_type}) == name
    # llama_cpp's `llm.metadata` holds the same values as strings.
    assert quantization_name({"general.file_type": str(file_type)}) == name


def test_quantization_unknown_or_absent() -> None:
    assert quantization_name({"general.file_type": 999}) == "ftype 999"
    assert quantization_name({}) is None
    assert quantization_name({"general.file_type": True}) is None


def test_special_tokens_missing_or_out_of_range() -> None:
    tokens = ["<s>", "</s>"]
    assert special_tokens({}) == {"bos_token": None, "eos_token": None}
    meta = {"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.bos_token_id": 0}
    meta["tokenizer.ggml.eos_token_id"] = 5
    assert special_tokens(meta) == {"bos_token": "<s>", "eos_token": None}
    meta = {"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.bos_token_id": -1}
    assert special_tokens(meta)["bos_token"] is None
    # llama_cpp's `llm.metadata` gives ids as strings.
    meta = {"tokenizer.ggml.tokens": tokens, "tokenizer.ggml.eos_token_id": "1"}
    assert special_tokens(meta)["eos_token"] == "</s>"


def test_large_vocabulary_reads_completely(tmp_path: Path) -> None:
    # Gemma 3 has 262,144 tokens plus scores and types of the same length.
    n = 262_144
    meta = {
        "tokenizer.ggml.tokens": [f"▁token{i}" for i in range(n)],
        "tokenizer.ggml.scores": Typed(ARRAY, [0.0] * n, FLOAT32),
        "tokenizer.ggml.token_type": Typed(ARRAY, [1] * n, INT32),
    }
    path = write_gguf(tmp_path / "big.gguf", meta)
    # Speed is not asserted by the clock here (a busy CI machine would fail it).
    gguf = read_gguf(path)
    assert len(gguf.metadata["tokenizer.ggml.tokens"]) == n
    assert gguf.metadata["tokenizer.ggml.tokens"][-1] == f"▁token{n - 1}"
