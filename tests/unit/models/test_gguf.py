"""The pure-Python GGUF reader on well-formed files: values, tensors, derived facts, and
what it keeps of the metadata. (Hostile and corrupt files: test_gguf_hostile.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.models.gguf import (
    KEPT_ARRAY_ITEMS,
    KEPT_STRING_BYTES,
    Unread,
    quantization_name,
    read_gguf,
)
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
        "no_ints": Typed(ARRAY, [], UINT16),
    }
    unread = {
        "words": (["a", "", "ü"], Unread("array of string", 3)),
        "nested": ([[1, 2], [3]], Unread("array of array", 2)),
        "no_items": (Typed(ARRAY, [], STRING), Unread("array of string", 0)),
    }
    path = write_gguf(tmp_path / "m.gguf", meta | {k: v for k, (v, _) in unread.items()})
    gguf = read_gguf(path)
    expected = {k: (v.value if isinstance(v, Typed) else v) for k, v in meta.items()}
    assert gguf.metadata == expected | {k: placeholder for k, (_, placeholder) in unread.items()}
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
    assert gguf.special_tokens() == {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}
    assert gguf.end_of_generation_ids() == [2]


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


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ({}, {"bos_token": None, "eos_token": None}),
        ({"bos": 0, "eos": 5}, {"bos_token": "<s>", "eos_token": None}),
        ({"bos": Typed(INT32, -1), "eos": 1}, {"bos_token": None, "eos_token": "</s>"}),
        # A mistyped id is no id (llama.cpp refuses the file itself).
        ({"bos": "0", "eos": Typed(BOOL, True)}, {"bos_token": "<s>", "eos_token": None}),
        ({"bos": 1.0, "eos": [1]}, {"bos_token": None, "eos_token": None}),
    ],
)
def test_special_tokens_missing_mistyped_or_out_of_range(
    tmp_path: Path, ids: dict[str, object], expected: dict[str, str | None]
) -> None:
    meta = {"tokenizer.ggml.tokens": ["<s>", "</s>"]}
    meta |= {f"tokenizer.ggml.{label}_token_id": v for label, v in ids.items()}
    assert read_gguf(write_gguf(tmp_path / "m.gguf", meta)).special_tokens() == expected


def test_keys_read_with_the_wrong_type_read_as_absent(tmp_path: Path) -> None:
    meta = {
        "general.architecture": 7,
        "general.name": ["a"],
        "general.license": 1.5,
        "general.file_type": "Q4_1",
        "tokenizer.chat_template": Typed(BOOL, True),
        "tokenizer.ggml.add_bos_token": 1,
        "tokenizer.ggml.tokens": Typed(ARRAY, [1, 2], UINT16),
        "general.parameter_count": "many",
    }
    gguf = read_gguf(write_gguf(tmp_path / "m.gguf", meta, tensors=[("w", (3,))]))
    assert (gguf.architecture, gguf.name, gguf.license, gguf.quantization) == (None,) * 4
    assert (gguf.chat_template, gguf.add_bos_token, gguf.vocabulary) == (None, None, None)
    assert gguf.context_length is None and gguf.vocab_size is None
    assert gguf.parameter_count == 3


def test_only_what_edgebench_reads_is_kept(tmp_path: Path) -> None:
    long_text = "x" * (KEPT_STRING_BYTES + 1)
    meta = {
        "general.description": long_text,
        "tokenizer.chat_template": long_text + "{{ messages }}",
        "llama.attention.head_count_kv": [3] * KEPT_ARRAY_ITEMS,
        "llama.rope.freqs": Typed(ARRAY, [0.5] * (KEPT_ARRAY_ITEMS + 1), FLOAT32),
    }
    gguf = read_gguf(write_gguf(tmp_path / "m.gguf", meta))
    assert gguf.metadata["general.description"] == Unread("string", KEPT_STRING_BYTES + 1)
    assert gguf.chat_template == long_text + "{{ messages }}"
    assert gguf.metadata["llama.attention.head_count_kv"] == [3] * KEPT_ARRAY_ITEMS
    skipped = gguf.metadata["llama.rope.freqs"]
    assert skipped == Unread("array of float32", KEPT_ARRAY_ITEMS + 1)
    assert str(skipped) == "<array of float32, 1,025 items, not read>"


def test_token_texts_are_found_anywhere_in_a_large_vocabulary(tmp_path: Path) -> None:
    # The ids come before the tokens here, and point past the first index step.
    vocab = [f"t{i}" for i in range(5000)]
    vocab[3333], vocab[4999], vocab[7] = "<s>", "<|im_end|>", "<end_of_turn>"
    meta = {
        "tokenizer.ggml.bos_token_id": 3333,
        "tokenizer.ggml.eos_token_id": 4999,
        "tokenizer.ggml.tokens": vocab,
    }
    gguf = read_gguf(write_gguf(tmp_path / "m.gguf", meta))
    assert gguf.special_tokens() == {"bos_token": "<s>", "eos_token": "<|im_end|>"}
    assert gguf.end_of_generation_ids() == [7, 4999]
    assert gguf.vocab_size == 5000


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
    assert gguf.vocab_size == n
    assert gguf.metadata["tokenizer.ggml.scores"] == Unread("array of float32", n)
