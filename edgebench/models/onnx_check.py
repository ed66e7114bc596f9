"""Check an ONNX file before onnxruntime opens it: well-formed, and no external data
outside the model's folder.

An ONNX graph can keep tensors in side files named by a relative `location`. A folder
from a stranger could name `../../home/me/.ssh/id_rsa` or `/etc/shadow` there, and the
runtime would read it; onnxruntime's own check differs between versions. So the file is
walked here first, in pure Python over the protobuf wire format (the runtime extra has no
`onnx` package): every tensor in the graph, in node attributes and in subgraphs. Large
`raw_data` fields are skipped by length, so a 500 MB model takes milliseconds. A
truncated or garbled file fails here with one line naming it.

Field numbers are those of onnx.proto (ModelProto.graph = 7, GraphProto.initializer = 5 ...).
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import UserError

# wire types
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

_MODEL_IR_VERSION, _MODEL_GRAPH = 1, 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_SPARSE_INITIALIZER = 1, 5, 15
_NODE_ATTRIBUTE = 5
_ATTR_T, _ATTR_G, _ATTR_TENSORS, _ATTR_GRAPHS = 5, 6, 10, 11
_ATTR_SPARSE_TENSOR, _ATTR_SPARSE_TENSORS = 22, 23
_SPARSE_VALUES, _SPARSE_INDICES = 1, 2
_TENSOR_NAME, _TENSOR_EXTERNAL_DATA, _TENSOR_DATA_LOCATION = 8, 13, 14
_ENTRY_KEY, _ENTRY_VALUE = 1, 2
_MAX_DEPTH = 32


class _Corrupt(Exception):
    def __init__(self, offset: int, problem: str) -> None:
        super().__init__(f"{problem} at byte {offset}")


@dataclass(frozen=True)
class ExternalTensor:
    """A tensor whose bytes live in another file."""

    tensor: str
    location: str


def _varint(buf: mmap.mmap | bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end:
            raise _Corrupt(pos, "truncated number")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Corrupt(pos, "number too long")


def _fields(buf: mmap.mmap | bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value start or the varint's value, value end) of every
    field of the message in buf[start:end]."""
    pos = start
    while pos < end:
        key, pos = _varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise _Corrupt(pos, "field number 0")
        if wire == _VARINT:
            value, pos = _varint(buf, pos, end)
            yield field, wire, value, pos
        elif wire == _LEN:
            length, pos = _varint(buf, pos, end)
            if pos + length > end:
                raise _Corrupt(pos, f"a field of {length} bytes runs past its end")
            yield field, wire, pos, pos + length
            pos += length
        elif wire in (_I64, _I32):
            pos += 8 if wire == _I64 else 4
            if pos > end:
                raise _Corrupt(pos, "truncated fixed-size field")
            yield field, wire, pos, pos
        else:
            raise _Corrupt(pos, f"invalid wire type {wire}")


def _text(buf: mmap.mmap | bytes, start: int, end: int) -> str:
    return bytes(buf[start:end]).decode("utf-8", "replace")


class _Walker:
    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.external: list[ExternalTensor] = []

    def tensor(self, start: int, end: int) -> None:
        name, location = "", None
        for field, wire, a, b in _fields(self.buf, start, end):
            if field == _TENSOR_NAME and wire == _LEN:
                name = _text(self.buf, a, b)
            elif field == _TENSOR_EXTERNAL_DATA and wire == _LEN:
                key = value = ""
                for f2, w2, c, d in _fields(self.buf, a, b):
                    if w2 == _LEN and f2 == _ENTRY_KEY:
                        key = _text(self.buf, c, d)
                    elif w2 == _LEN and f2 == _ENTRY_VALUE:
                        value = _text(self.buf, c, d)
                if key == "location":
                    location = value
            elif field == _TENSOR_DATA_LOCATION and wire == _VARINT and a == 1 and location is None:
                location = ""  # EXTERNAL without a location: reported as such
        if location is not None:
            self.external.append(ExternalTensor(name, location))

    def sparse(self, start: int, end: int) -> None:
        for field, wire, a, b in _fields(self.buf, start, end):
            if field in (_SPARSE_VALUES, _SPARSE_INDICES) and wire == _LEN:
                self.tensor(a, b)

    def graph(self, start: int, end: int, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Corrupt(start, "subgraphs nested too deeply")
        for field, wire, a, b in _fields(self.buf, start, end):
            if wire != _LEN:
                continue
            if field == _GRAPH_INITIALIZER:
                self.tensor(a, b)
            elif field == _GRAPH_SPARSE_INITIALIZER:
                self.sparse(a, b)
            elif field == _GRAPH_NODE:
                for f2, w2, c, d in _fields(self.buf, a, b):
                    if f2 == _NODE_ATTRIBUTE and w2 == _LEN:
                        self.attribute(c, d, depth)

    def attribute(self, start: int, end: int, depth: int) -> None:
        for field, wire, a, b in _fields(self.buf, start, end):
            if wire != _LEN:
                continue
            if field in (_ATTR_T, _ATTR_TENSORS):
                self.tensor(a, b)
            elif field in (_ATTR_G, _ATTR_GRAPHS):
                self.graph(a, b, depth + 1)
            elif field in (_ATTR_SPARSE_TENSOR, _ATTR_SPARSE_TENSORS):
                self.sparse(a, b)


def external_tensors(path: Path) -> list[ExternalTensor]:
    """Every tensor of the ONNX model at `path` that keeps its data in another file.
    A file that is not a well-formed ONNX model is a UserError naming it."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                raise UserError(f"{path}: not a valid ONNX model (the file is empty)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _walk_model(buf, size)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except _Corrupt as exc:
        raise UserError(f"{path}: not a valid ONNX model (corrupt or truncated: {exc})") from None


def _walk_model(buf: mmap.mmap, size: int) -> list[ExternalTensor]:
    walker = _Walker(buf)
    seen_ir = seen_graph = False
    for field, wire, a, b in _fields(buf, 0, size):
        if field == _MODEL_IR_VERSION and wire == _VARINT:
            seen_ir = True
        elif field == _MODEL_GRAPH and wire == _LEN:
            seen_graph = True
            walker.graph(a, b, 0)
    if not (seen_ir and seen_graph):
        raise _Corrupt(size, "no ir_version or no graph")
    return walker.external


def check_model_file(path: Path, folder: Path) -> list[ExternalTensor]:
    """Raise a one-line UserError unless `path` is a well-formed ONNX model whose external
    data files all lie inside `folder` and exist. Returns the external tensors."""
    root = folder.resolve()
    tensors = external_tensors(path)
    for item in tensors:
        where = f"{path}: tensor '{item.tensor}'"
        if not item.location:
            raise UserError(f"{where} is stored externally but names no file")
        target = (root / item.location).resolve()
        if Path(item.location).is_absolute() or not target.is_relative_to(root):
            raise UserError(
                f"{where} points its external data at '{item.location}', outside the model "
                f"folder {root}; refusing to load it"
            )
        if not target.is_file():
            raise UserError(f"{where}: external data file '{item.location}' is missing")
    return tensors
