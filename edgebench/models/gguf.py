"""A pure-Python reader for GGUF headers: no llama_cpp, no weights loaded.

The header is read in one pass through a small moving window of the file (never mapped
or read whole), so this process holds little whatever the file holds. Only what edgebench
reads is kept (see KEPT_* below); every other array and long string is stepped over
unread and stands in the metadata as `Unread` (its type and length). The vocabulary is
walked for its size, its end-of-generation tokens and a sparse index through which the
BOS and EOS texts are read afterwards. What is kept is charged against
MAX_METADATA_MEMORY (a one-line error naming the file beyond it).

Every count and length read from the file is checked against the bytes that remain before
anything is allocated, so a corrupt or hostile file ends in a one-line `UserError` naming
the file, never in a crash or a multi-gigabyte allocation. The tensor table is held to
the rules llama.cpp's own loader applies (names, dimensions, known types, aligned offsets
packed in order, data inside the file), so a file that passes here does not reach native
code with a header llama.cpp would mis-read or abort on (docs/reliability.md).

Format reference: ggml's docs/gguf.md (version 2 and 3, little-endian).
"""

from __future__ import annotations

import stat
import struct
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import Any, BinaryIO

from edgebench.errors import UserError

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32

# Sanity caps, far above any real model (SmolLM2: 272 tensors, 37 keys; Gemma 3: 262,144
# tokens; the largest MoE files a few thousand tensors) but low enough that a bogus count
# fails fast instead of looping for hours, and that the tensor table a hostile file can
# make this process hold stays small (about 250 bytes of Python objects per tensor).
MAX_TENSORS = 1 << 16
MAX_KV = 1 << 16
MAX_ARRAY_LEN = 1 << 23
MAX_STRING_LEN = 1 << 26
MAX_DEPTH = 8
MAX_DIMS = 4  # GGML_MAX_DIMS: llama.cpp refuses more
MAX_TENSOR_NAME = 63  # GGML_MAX_NAME is 64 bytes with the terminating NUL

# What the reader keeps of the metadata (everything else is stepped over, never read into
# memory): scalars, strings up to KEPT_STRING_BYTES (names, licences, architectures) and
# the chat template whatever its length, numeric arrays up to KEPT_ARRAY_ITEMS items
# (per-layer head counts). What it keeps is charged at rough CPython sizes against
# MAX_METADATA_MEMORY; a real model's header costs a few KB of it.
MAX_METADATA_MEMORY = 16 << 20
KEPT_STRING_BYTES = 1024
LONG_STRING_KEYS = frozenset({"tokenizer.chat_template"})
KEPT_ARRAY_ITEMS = 1024
_KEY_COST, _VALUE_COST, _ITEM_COST = 64, 32, 40
# The vocabulary is walked once: its size, the ids of end-of-generation tokens, and the
# offset of every _INDEX_STEP-th token, to read the BOS and EOS texts afterwards.
TOKENS_KEY = "tokenizer.ggml.tokens"
_INDEX_STEP = 1024
# Tokens llama.cpp also ends generation on (its end-of-generation set, by text).
EOG_TEXTS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>")
_EOG_BYTES = frozenset(text.encode() for text in EOG_TEXTS)
_EOG_LENGTHS = frozenset(len(raw) for raw in _EOG_BYTES)
# The file is read through a moving window of this many bytes.
WINDOW = 1 << 18

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
_UINT32, _STRING, _ARRAY = 4, 8, 9
_TYPE_NAMES = {
    0: "uint8",
    1: "int8",
    2: "uint16",
    3: "int16",
    4: "uint32",
    5: "int32",
    6: "float32",
    7: "bool",
    8: "string",
    9: "array",
    10: "uint64",
    11: "int64",
    12: "float64",
}
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


@dataclass(frozen=True, slots=True)
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
class Unread:
    """A metadata value the reader stepped over without keeping it: an array (`type` is
    "array of uint16" ..., `length` its items) or a long string (`length` in bytes)."""

    type: str
    length: int

    def __str__(self) -> str:
        unit = "bytes" if self.type == "string" else "items"
        return f"<{self.type}, {self.length:,} {unit}, not read>"


@dataclass(frozen=True)
class Vocabulary:
    """What edgebench reads of `tokenizer.ggml.tokens`, without keeping its strings."""

    size: int
    texts: dict[int, str]  # the BOS and EOS tokens' texts, by id
    end_ids: tuple[int, ...]  # the tokens whose text is one of EOG_TEXTS


@dataclass(frozen=True)
class GGUFFile:
    """The header of a GGUF file: metadata key/values and tensor infos. Every accessor
    type-checks what it reads: a value of the wrong type is None, never an exception."""

    path: Path
    version: int
    metadata: dict[str, Any]
    tensors: list[TensorInfo]
    file_size: int
    vocabulary: Vocabulary | None = None

    @property
    def architecture(self) -> str | None:
        return _str_or_none(self.metadata.get("general.architecture"))

    @property
    def name(self) -> str | None:
        return _str_or_none(self.metadata.get("general.name"))

    @property
    def license(self) -> str | None:
        return _str_or_none(self.metadata.get("general.license"))

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
        if self.vocabulary is not None:
            return self.vocabulary.size
        return _int_or_none(self.metadata.get(f"{self.architecture}.vocab_size"))

    @property
    def add_bos_token(self) -> bool | None:
        value = self.metadata.get("tokenizer.ggml.add_bos_token")
        return value if isinstance(value, bool) else None

    @property
    def parameter_count(self) -> int:
        """`general.parameter_count` when the converter wrote it, else the tensors' sum."""
        declared = _int_or_none(self.metadata.get("general.parameter_count"))
        if declared is not None:
            return declared
        return sum(t.n_elements for t in self.tensors)

    def token_id(self, label: str) -> int | None:
        """`tokenizer.ggml.{label}_token_id` (bos, eos, eot ...), None if absent or mistyped."""
        return _int_or_none(self.metadata.get(f"tokenizer.ggml.{label}_token_id"))

    def special_tokens(self) -> dict[str, str | None]:
        """The BOS and EOS token strings (None when the id is absent or out of range)."""
        texts = self.vocabulary.texts if self.vocabulary is not None else {}
        return {f"{label}_token": texts.get(self.token_id(label)) for label in ("bos", "eos")}  # type: ignore[arg-type]

    def end_of_generation_ids(self) -> list[int]:
        """The EOS and EOT ids and every token whose text is one of EOG_TEXTS."""
        ids = {i for i in (self.token_id("eos"), self.token_id("eot")) if i is not None}
        ids.update(self.vocabulary.end_ids if self.vocabulary is not None else ())
        return sorted(ids)


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


def read_gguf(path: str | Path) -> GGUFFile:
    """Parse the header of the GGUF file at `path` (metadata and tensor infos)."""
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the open
            raise UserError(f"not a GGUF file: {path} (not a regular file)")
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size < 4:
                f.seek(0)
                raise UserError(f"not a GGUF file: {path} (starts with {f.read(4)!r})")
            return _Parser(path, f, size).parse()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from exc


class _Parser:
    """Cursor `pos` over the file, read through a moving window; every read checks the
    bytes that remain, and what is kept is charged against MAX_METADATA_MEMORY."""

    def __init__(self, path: Path, file: BinaryIO, size: int) -> None:
        self.path = path
        self.file = file
        self.size = size
        self.pos = 0
        self.window = b""
        self.window_start = 0
        self.kept = 0  # rough bytes of Python objects kept so far
        self.context = "header"  # what is being read, for error messages
        self.n_tokens: int | None = None
        self.token_index: list[int] = []
        self.end_ids: list[int] = []

    def fail(self, problem: str) -> UserError:
        return UserError(f"corrupt GGUF file {self.path}: {problem} ({self.context})")

    def need(self, n: int) -> None:
        if n > self.size - self.pos:
            raise self.fail(
                f"truncated: needs {n} bytes at offset {self.pos}, file has {self.size}"
            )

    def view(self, n: int) -> tuple[bytes, int]:
        """The window holding the `n` bytes at `pos`, and where they start in it."""
        self.need(n)
        at = self.pos - self.window_start
        if at < 0 or at + n > len(self.window):
            self.file.seek(self.pos)
            self.window = self.file.read(max(n, WINDOW))
            self.window_start, at = self.pos, 0
            if len(self.window) < n:
                raise self.fail(f"the file changed while it was read (offset {self.pos})")
        return self.window, at

    def unpack(self, item: struct.Struct) -> Any:
        buf, at = self.view(item.size)
        self.pos += item.size
        return item.unpack_from(buf, at)[0]

    def u32(self) -> int:
        return self.unpack(_U32)

    def u64(self) -> int:
        return self.unpack(_U64)

    def skip(self, n: int) -> None:
        self.need(n)
        self.pos += n

    def charge(self, n: int) -> None:
        self.kept += n
        if self.kept > MAX_METADATA_MEMORY:
            cap = f"{MAX_METADATA_MEMORY / (1 << 20):g} MiB"
            raise UserError(
                f"GGUF file {self.path}: its metadata needs more than the {cap} edgebench "
                f"keeps of a header ({self.context}); a real model's needs a few KB"
            )

    def count(self, what: str, cap: int, min_item_bytes: int) -> int:
        """A u64 count, bounded by `cap` and by what the remaining bytes could hold."""
        n = self.u64()
        if n > cap or n * min_item_bytes > self.size - self.pos:
            raise self.fail(
                f"{what} {n} is impossible (limit {cap:,}, {self.size - self.pos} bytes left)"
            )
        return n

    def string_length(self) -> int:
        return self.count("string length", MAX_STRING_LEN, 1)

    def text(self, n: int) -> str:
        """The `n`-byte string at `pos`, kept (charged before it is read)."""
        self.charge(_VALUE_COST + n)
        buf, at = self.view(n)
        self.pos += n
        return buf[at : at + n].decode("utf-8", errors="replace")

    def string(self) -> str:
        return self.text(self.string_length())

    def parse(self) -> GGUFFile:
        buf, at = self.view(4)
        magic = buf[at : at + 4]
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
            self.charge(_KEY_COST)
            self.context = f"key {key!r}"
            if key in metadata:
                raise self.fail("duplicate key")
            metadata[key] = self.value(key, self.u32())

        tensors = [self.tensor_info(i) for i in range(n_tensors)]
        self.check_data_section(metadata, tensors)
        vocabulary = self.vocabulary(metadata)
        return GGUFFile(self.path, version, metadata, tensors, self.size, vocabulary)

    def value(self, key: str, vtype: int) -> Any:
        if key == "general.alignment" and vtype != _UINT32:
            # llama.cpp reads it with gguf_get_val_u32, which aborts on any other type.
            raise self.fail(
                f"general.alignment is stored as {_TYPE_NAMES.get(vtype, vtype)}; "
                "llama.cpp reads only a uint32 there"
            )
        item = _SCALARS.get(vtype)
        if item is not None:
            return self.unpack(item)
        if vtype == _STRING:
            n = self.string_length()
            if n <= KEPT_STRING_BYTES or key in LONG_STRING_KEYS:
                return self.text(n)
            self.skip(n)
            return Unread("string", n)
        if vtype == _ARRAY:
            return self.array(key)
        raise self.fail(f"unknown value type {vtype}")

    def array(self, key: str) -> list[Any] | Unread:
        """A top-level array: short numeric ones are kept, the rest stepped over."""
        etype = self.u32()
        item = _SCALARS.get(etype)
        if item is not None:
            n = self.count("array length", MAX_ARRAY_LEN, item.size)
            if n > KEPT_ARRAY_ITEMS:
                self.skip(n * item.size)
                return Unread(f"array of {_TYPE_NAMES[etype]}", n)
            self.charge(_VALUE_COST + n * _ITEM_COST)
            buf, at = self.view(n * item.size)
            self.pos += n * item.size
            return list(struct.unpack_from(f"<{n}{item.format[-1]}", buf, at))
        n = self.skip_items(etype, depth=1, vocabulary=key == TOKENS_KEY)
        return Unread(f"array of {_TYPE_NAMES[etype]}", n)

    def skip_items(self, etype: int, depth: int, vocabulary: bool = False) -> int:
        """Step over an array's length and items (its element type `etype` read); its
        length."""
        if depth > MAX_DEPTH:
            raise self.fail(f"arrays nested deeper than {MAX_DEPTH} levels")
        item = _SCALARS.get(etype)
        if item is not None:
            n = self.count("array length", MAX_ARRAY_LEN, item.size)
            self.skip(n * item.size)
        elif etype == _STRING:
            n = self.count("array length", MAX_ARRAY_LEN, 8)
            self.skip_strings(n, vocabulary)
        elif etype == _ARRAY:
            n = self.count("array length", MAX_ARRAY_LEN, 12)
            for _ in range(n):
                self.skip_items(self.u32(), depth + 1)
        else:
            raise self.fail(f"unknown array element type {etype}")
        return n

    def skip_strings(self, n: int, vocabulary: bool) -> None:
        """Step over `n` strings reading only their lengths. For the vocabulary, also note
        its size, every _INDEX_STEP-th token's offset and the end-of-generation tokens.
        The hot loop for vocabularies: it works on the window directly."""
        if vocabulary:
            self.n_tokens = n
        size, unpack = self.size, _U64.unpack_from
        buf, base, pos = self.window, self.window_start, self.pos
        for i in range(n):
            at = pos - base
            if at < 0 or at + 8 > len(buf):
                self.pos = pos
                buf, at = self.view(8)
                base = self.window_start
            (length,) = unpack(buf, at)
            pos += 8
            if length > size - pos:
                self.pos = pos
                raise self.fail(f"string length {length} exceeds the {size - pos} bytes left")
            if vocabulary:
                if i % _INDEX_STEP == 0:
                    self.token_index.append(pos - 8)
                if length in _EOG_LENGTHS:
                    self.pos = pos
                    raw, at = self.view(length)
                    buf, base = raw, self.window_start
                    if raw[at : at + length] in _EOG_BYTES:
                        self.charge(_ITEM_COST)
                        self.end_ids.append(i)
            pos += length
        self.pos = pos

    def vocabulary(self, metadata: dict[str, Any]) -> Vocabulary | None:
        """The vocabulary walked in the metadata, with its BOS and EOS texts read now
        (the ids may come after the tokens in the file)."""
        if self.n_tokens is None:
            return None
        texts: dict[int, str] = {}
        for label in ("bos", "eos"):
            token_id = _int_or_none(metadata.get(f"tokenizer.ggml.{label}_token_id"))
            if token_id is not None and 0 <= token_id < self.n_tokens:
                self.context = f"token {token_id}"
                self.pos = self.token_index[token_id // _INDEX_STEP]
                for _ in range(token_id % _INDEX_STEP):
                    self.skip(self.u64())
                texts[token_id] = self.string()
        return Vocabulary(self.n_tokens, texts, tuple(self.end_ids))

    def tensor_info(self, index: int) -> TensorInfo:
        self.context = f"tensor #{index}"
        n = self.string_length()
        if n > MAX_TENSOR_NAME:
            raise self.fail(f"tensor name of {n} bytes (at most {MAX_TENSOR_NAME})")
        name = self.text(n)
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
        alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)  # a uint32 (value())
        if alignment <= 0 or alignment & (alignment - 1):
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
