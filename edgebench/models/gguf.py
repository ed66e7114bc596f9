"""A pure-Python reader for GGUF metadata: no llama_cpp, no weights loaded.

The file is memory-mapped and parsed with precompiled `struct`s. Every count and length
read from the file is checked against the bytes that remain before anything is
allocated, so a corrupt or hostile file ends in a one-line `UserError` naming the file,
never in a crash or a multi-gigabyte allocation. The tensor table is held to the rules
llama.cpp's own loader applies (names, dimensions, known types, aligned offsets packed in
order, data inside the file), so a file that passes here does not reach native code with
a header llama.cpp would mis-read (docs/reliability.md).

Format reference: ggml's docs/gguf.md (version 2 and 3, little-endian).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import Any

from edgebench.errors import UserError

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32

# Sanity caps, far above any real model (SmolLM2: 272 tensors, 37 keys; Gemma 3: 262,144
# tokens) but low enough that a bogus count fails fast instead of looping for hours.
MAX_TENSORS = 1 << 20
MAX_KV = 1 << 16
MAX_ARRAY_LEN = 1 << 23
MAX_STRING_LEN = 1 << 26
MAX_DEPTH = 8
MAX_DIMS = 4  # GGML_MAX_DIMS: llama.cpp refuses more
MAX_TENSOR_NAME = 63  # GGML_MAX_NAME is 64 bytes with the terminating NUL

# ggml tensor types -> (elements per block, bytes per block), from ggml's type traits.
# Types missing here and not listed as removed are newer than this table: their data
# size is left to llama.cpp to check.
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 36),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    16: (256, 66),  # IQ2_XXS
    17: (256, 74),  # IQ2_XS
    18: (256, 98),  # IQ3_XXS
    19: (256, 50),  # IQ1_S
    20: (32, 18),  # IQ4_NL
    21: (256, 110),  # IQ3_S
    22: (256, 82),  # IQ2_S
    23: (256, 136),  # IQ4_XS
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    29: (256, 56),  # IQ1_M
    30: (1, 2),  # BF16
    34: (256, 54),  # TQ1_0
    35: (256, 66),  # TQ2_0
    39: (32, 17),  # MXFP4
}
# Q4_2, Q4_3 and the repacked Q4_0_4_4 ... IQ4_NL_8_8 types: ggml no longer loads them.
GGML_REMOVED_TYPES = frozenset({4, 5, 31, 32, 33, 36, 37, 38})

# GGUFValueType -> struct for the fixed-size types; 8 is string, 9 array.
_STRING, _ARRAY = 8, 9
_SCALARS: dict[int, struct.Struct] = {
    vtype: struct.Struct("<" + fmt)
    for vtype, fmt in {
        0: "B",
        1: "b",
        2: "H",
        3: "h",
        4: "I",
        5: "i",
        6: "f",
        7: "?",
        10: "Q",
        11: "q",
        12: "d",
    }.items()
}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")

# llama.cpp's `enum llama_ftype` (llama.h; mirrored by gguf-py's LlamaFileType), stored in
# `general.file_type`. Gaps are values llama.cpp removed.
FILE_TYPES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    4: "Q4_1_SOME_F16",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    36: "TQ1_0",
    37: "TQ2_0",
    38: "MXFP4_MOE",
    39: "NVFP4",
    40: "Q1_0",
}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's header entry (its data is never read)."""

    name: str
    dims: tuple[int, ...]
    ggml_type: int
    offset: int

    @property
    def n_elements(self) -> int:
        return prod(self.dims)


@dataclass(frozen=True)
class GGUFFile:
    """The header of a GGUF file: metadata key/values and tensor infos."""

    path: Path
    version: int
    metadata: dict[str, Any]
    tensors: list[TensorInfo]
    file_size: int

    @property
    def architecture(self) -> str | None:
        return _str_or_none(self.metadata.get("general.architecture"))

    @property
    def name(self) -> str | None:
        return _str_or_none(self.metadata.get("general.name"))

    @property
    def chat_template(self) -> str | None:
        return _str_or_none(self.metadata.get("tokenizer.chat_template"))

    @property
    def quantization(self) -> str | None:
        return quantization_name(self.metadata)

    @property
    def context_length(self) -> int | None:
        return context_length(self.metadata)

    @property
    def vocab_size(self) -> int | None:
        tokens = self.metadata.get("tokenizer.ggml.tokens")
        if isinstance(tokens, list):
            return len(tokens)
        return _int_or_none(self.metadata.get(f"{self.architecture}.vocab_size"))

    @property
    def parameter_count(self) -> int:
        """`general.parameter_count` when the converter wrote it, else the tensors' sum."""
        declared = _int_or_none(self.metadata.get("general.parameter_count"))
        if declared is not None:
            return declared
        return sum(t.n_elements for t in self.tensors)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    # llama_cpp's `llm.metadata` holds every value as a string, so accept "15" too.
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    # bool is an int subclass; a boolean is never a count or an id.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def quantization_name(meta: dict[str, Any]) -> str | None:
    """Quantization name from `general.file_type` ("Q4_K_M"), None when absent."""
    ftype = _int_or_none(meta.get("general.file_type"))
    if ftype is None:
        return None
    return FILE_TYPES.get(ftype, f"ftype {ftype}")


def context_length(meta: dict[str, Any]) -> int | None:
    """The training context length, `{arch}.context_length`."""
    arch = meta.get("general.architecture")
    return _int_or_none(meta.get(f"{arch}.context_length"))


def special_tokens(meta: dict[str, Any]) -> dict[str, str | None]:
    """The BOS and EOS token strings, looked up by id in `tokenizer.ggml.tokens`."""
    tokens = meta.get("tokenizer.ggml.tokens")
    result: dict[str, str | None] = {}
    for label in ("bos", "eos"):
        token_id = _int_or_none(meta.get(f"tokenizer.ggml.{label}_token_id"))
        known = isinstance(tokens, list) and token_id is not None and 0 <= token_id < len(tokens)
        result[f"{label}_token"] = _str_or_none(tokens[token_id]) if known else None
    return result


def read_gguf(path: str | Path) -> GGUFFile:
    """Parse the header of the GGUF file at `path` (metadata and tensor infos)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size < 4:
                f.seek(0)
                raise UserError(f"not a GGUF file: {path} (starts with {f.read()!r})")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _Parser(path, buf, size).parse()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from exc


class _Parser:
    """Cursor over the mapped file; every read checks the bytes that remain."""

    def __init__(self, path: Path, buf: mmap.mmap, size: int) -> None:
        self.path = path
        self.buf = buf
        self.size = size
        self.pos = 0
        self.context = "header"  # what is being read, for error messages

    def fail(self, problem: str) -> UserError:
        return UserError(f"corrupt GGUF file {self.path}: {problem} ({self.context})")

    def need(self, n: int) -> None:
        if n > self.size - self.pos:
            raise self.fail(
                f"truncated: needs {n} bytes at offset {self.pos}, file has {self.size}"
            )

    def u32(self) -> int:
        self.need(4)
        (value,) = _U32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return value

    def u64(self) -> int:
        self.need(8)
        (value,) = _U64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return value

    def count(self, what: str, cap: int, min_item_bytes: int) -> int:
        """A u64 count, bounded by `cap` and by what the remaining bytes could hold."""
        n = self.u64()
        if n > cap or n * min_item_bytes > self.size - self.pos:
            raise self.fail(
                f"{what} {n} is impossible (limit {cap:,}, {self.size - self.pos} bytes left)"
            )
        return n

    def string(self) -> str:
        n = self.count("string length", MAX_STRING_LEN, 1)
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def parse(self) -> GGUFFile:
        magic = self.buf[:4]
        if magic != MAGIC:
            raise UserError(f"not a GGUF file: {self.path} (starts with {magic!r})")
        self.pos = 4
        version = self.u32()
        if version not in SUPPORTED_VERSIONS:
            if version & 0xFFFF == 0 and version:
                raise self.fail("big-endian GGUF files are not supported")
            raise self.fail(f"GGUF version {version} is not supported (only 2 and 3)")
        # Lower bounds of one entry's size: a tensor info is name length + n_dims + type +
        # offset; a key/value is key length + type + a one-byte value.
        n_tensors = self.count("tensor count", MAX_TENSORS, 24)
        n_kv = self.count("key/value count", MAX_KV, 13)

        metadata: dict[str, Any] = {}
        for i in range(n_kv):
            self.context = f"key #{i}"
            key = self.string()
            self.context = f"key {key!r}"
            if key in metadata:
                raise self.fail("duplicate key")
            metadata[key] = self.value(self.u32(), depth=0)

        tensors = [self.tensor_info(i) for i in range(n_tensors)]
        self.check_data_section(metadata, tensors)
        return GGUFFile(self.path, version, metadata, tensors, self.size)

    def value(self, vtype: int, depth: int) -> Any:
        item = _SCALARS.get(vtype)
        if item is not None:
            self.need(item.size)
            (result,) = item.unpack_from(self.buf, self.pos)
            self.pos += item.size
            return result
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            return self.array(depth + 1)
        raise self.fail(f"unknown value type {vtype}")

    def array(self, depth: int) -> list[Any]:
        if depth > MAX_DEPTH:
            raise self.fail(f"arrays nested deeper than {MAX_DEPTH} levels")
        etype = self.u32()
        item = _SCALARS.get(etype)
        if item is not None:
            # One unpack for the whole run of fixed-size values (fast for 262k scores).
            n = self.count("array length", MAX_ARRAY_LEN, item.size)
            values = list(struct.unpack_from(f"<{n}{item.format[-1]}", self.buf, self.pos))
            self.pos += n * item.size
            return values
        if etype == _STRING:
            return self.string_array(self.count("array length", MAX_ARRAY_LEN, 8))
        if etype == _ARRAY:
            n = self.count("array length", MAX_ARRAY_LEN, 12)
            return [self.array(depth + 1) for _ in range(n)]
        raise self.fail(f"unknown array element type {etype}")

    def string_array(self, n: int) -> list[str]:
        # The hot loop for vocabularies: locals instead of attribute lookups, and the
        # same bounds checks as `string()` inlined.
        buf, pos, size, unpack = self.buf, self.pos, self.size, _U64.unpack_from
        out: list[str] = []
        append = out.append
        for _ in range(n):
            if pos + 8 > size:
                self.pos = pos
                self.need(8)
            (length,) = unpack(buf, pos)
            pos += 8
            if length > size - pos:
                self.pos = pos
                raise self.fail(f"string length {length} exceeds the {size - pos} bytes left")
            append(buf[pos : pos + length].decode("utf-8", errors="replace"))
            pos += length
        self.pos = pos
        return out

    def tensor_info(self, index: int) -> TensorInfo:
        self.context = f"tensor #{index}"
        name = self.string()
        if len(name.encode("utf-8", "surrogateescape")) > MAX_TENSOR_NAME:
            raise self.fail(f"tensor name of {len(name)} characters (at most {MAX_TENSOR_NAME})")
        self.context = f"tensor {name!r}"
        n_dims = self.u32()
        if n_dims > MAX_DIMS:
            raise self.fail(f"{n_dims} dimensions (at most {MAX_DIMS})")
        dims = tuple(self.u64() for _ in range(n_dims))
        if any(d >= 1 << 63 for d in dims) or prod(dims) >= 1 << 63:
            raise self.fail(f"element count of dims {dims} overflows")
        ggml_type = self.u32()
        if ggml_type in GGML_REMOVED_TYPES:
            raise self.fail(f"tensor type {ggml_type} is no longer supported by ggml")
        block = GGML_BLOCKS.get(ggml_type)
        if block is not None and dims and dims[0] % block[0]:
            raise self.fail(
                f"row of {dims[0]} elements is not a multiple of the block size {block[0]}"
            )
        offset = self.u64()
        return TensorInfo(name, dims, ggml_type, offset)

    def check_data_section(self, metadata: dict[str, Any], tensors: list[TensorInfo]) -> None:
        """Tensor data starts at the next aligned offset. As llama.cpp requires, tensors
        are stored in header order, each at the aligned end of the one before, and all of
        their data lies inside the file."""
        self.context = "tensor data"
        alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
        if _int_or_none(alignment) is None or alignment <= 0 or alignment & (alignment - 1):
            raise self.fail(f"general.alignment {alignment!r} is not a power of two")
        data_start = -(-self.pos // alignment) * alignment
        expected = 0  # where the next tensor must start, relative to data_start
        names: set[str] = set()
        for tensor in tensors:
            if tensor.name in names:
                raise self.fail(f"duplicate tensor name {tensor.name!r}")
            names.add(tensor.name)
            where = data_start + tensor.offset
            if where >= self.size and tensor_bytes(tensor) != 0:
                raise self.fail(
                    f"tensor {tensor.name!r} starts at byte {where}, "
                    f"past the end of the {self.size}-byte file (incomplete download?)"
                )
            if expected is not None and tensor.offset != expected:
                raise self.fail(
                    f"tensor {tensor.name!r} at data offset {tensor.offset}, expected {expected}"
                )
            nbytes = tensor_bytes(tensor)
            if nbytes is None:
                expected = None  # a type newer than our table: llama.cpp checks the rest
                continue
            if where + nbytes > self.size:
                raise self.fail(
                    f"tensor {tensor.name!r} needs bytes {where}..{where + nbytes}, past the "
                    f"end of the {self.size}-byte file (incomplete download?)"
                )
            expected = tensor.offset + -(-nbytes // alignment) * alignment


def tensor_bytes(tensor: TensorInfo) -> int | None:
    """The size of a tensor's data, or None for a type this table does not know."""
    block = GGML_BLOCKS.get(tensor.ggml_type)
    if block is None:
        return None
    elements, size = block
    return tensor.n_elements // elements * size


def kv_cache_bytes_per_token(meta: dict[str, Any]) -> int | None:
    """Bytes of K and V cache one token of context takes (f16 cache, llama.cpp's default),
    from `{arch}.block_count`, the attention head counts and head sizes; None when the
    metadata does not say (a model without attention layers of the usual shape).

    Per-layer head counts (an array) are summed layer by layer. Sliding-window layers are
    counted at full context, so the figure is an upper bound for such models. The values
    come from the file: nothing here allocates by them (a block_count of 2**31 is just
    a large product, which the memory pre-check then refuses)."""
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        return None
    n_layer = _int_or_none(meta.get(f"{arch}.block_count"))
    n_embd = _int_or_none(meta.get(f"{arch}.embedding_length"))
    heads = meta.get(f"{arch}.attention.head_count")
    kv_heads = meta.get(f"{arch}.attention.head_count_kv", heads)
    if n_layer is None or n_embd is None:
        return None
    most_heads = _largest_count(heads, n_layer)
    total_kv_heads = _total_count(kv_heads, n_layer)
    if not most_heads or total_kv_heads is None:
        return None
    default_head = n_embd // most_heads
    key = _int_or_none(meta.get(f"{arch}.attention.key_length")) or default_head
    value = _int_or_none(meta.get(f"{arch}.attention.value_length")) or default_head
    return total_kv_heads * (key + value) * 2


def _per_layer_counts(value: Any, n_layer: int) -> list[int] | None:
    """An array of per-layer head counts (bounded by the file), checked against n_layer."""
    counts = [_int_or_none(v) for v in value]
    if len(counts) != n_layer or any(c is None for c in counts):
        return None
    return counts  # type: ignore[return-value]


def _largest_count(value: Any, n_layer: int) -> int | None:
    if isinstance(value, list):
        counts = _per_layer_counts(value, n_layer)
        return max(counts, default=None) if counts is not None else None
    return _int_or_none(value)


def _total_count(value: Any, n_layer: int) -> int | None:
    """The sum over layers of a head count given once for all layers or per layer."""
    if isinstance(value, list):
        counts = _per_layer_counts(value, n_layer)
        return sum(counts) if counts is not None else None
    count = _int_or_none(value)
    return None if count is None else count * n_layer
