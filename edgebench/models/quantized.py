"""GGUF variants quantized by `edgebench models quantize`: names, files and provenance.

`edgebench models quantize smollm2-135m-instruct --types Q4_K_M` writes
`<model cache>/gguf/smollm2-135m-instruct@Q4_K_M.gguf` and beside it
`smollm2-135m-instruct@Q4_K_M.json`, which says what it was made from (the source's name,
sha256 and quantization, whether it was requantized), its own sha256 and size, and the
llama-cpp-python that made it. Everywhere a model is named it is `NAME@Q4_K_M`: NAME is
the registry name, or the stem of the local or `hf:` file it was made from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from edgebench.errors import UserError
from edgebench.models.hashing import sha256_file
from edgebench.models.quant_types import FLOAT_TYPES, canonical_type, precision_rank
from edgebench.paths import model_cache_dir
from edgebench.readback import present, read_json

FORMAT = "edgebench-quantized/1"
FOLDER = "gguf"

QuantState = Literal["yes", "no", "corrupt"]


def variant_label(base: str, quant_type: str) -> str:
    """`smollm2-135m-instruct` + `Q4_K_M` -> `smollm2-135m-instruct@Q4_K_M`."""
    return f"{base}@{quant_type}"


def split_quant_variant(spec: str) -> tuple[str, str] | None:
    """`NAME@q4_k_m` -> (NAME, "Q4_K_M"); None when the part after the last `@` is not
    a llama.cpp type (an ONNX variant, a path, a plain name)."""
    base, at, suffix = spec.rpartition("@")
    if not at or not base:
        return None
    quant_type = canonical_type(suffix)
    return (base, quant_type) if quant_type else None


def base_name_of(stem: str) -> str:
    """A variant's NAME from a file stem: characters a name cannot hold (`@`, spaces,
    path separators) become `-`."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", stem).strip(".-") or "model"


def quantized_root() -> Path:
    return model_cache_dir() / FOLDER


def variant_file(base: str, quant_type: str) -> Path:
    return quantized_root() / f"{variant_label(base, quant_type)}.gguf"


def provenance_file(base: str, quant_type: str) -> Path:
    return quantized_root() / f"{variant_label(base, quant_type)}.json"


def requantize_note(source_quantization: str | None, quant_type: str) -> str:
    """What a variant made from an already-quantized file can be worth."""
    note = f"requantized from {source_quantization}: the ceiling is the source's quality"
    if precision_rank(quant_type) > precision_rank(source_quantization):
        note += (
            f" ({quant_type} stores more bits per weight than {source_quantization} but "
            "none of the precision the source lost)"
        )
    return note


def is_requantization(source_quantization: str | None, tensor_types: set[int]) -> bool:
    """Is the source already quantized? By its file type when it names a float type,
    else by its tensors (any type other than F32, F16, BF16)."""
    if source_quantization in FLOAT_TYPES:
        return False
    return bool(tensor_types - {0, 1, 30})


@dataclass(frozen=True)
class QuantizedModel:
    """A quantized variant as its provenance file describes it."""

    path: Path  # the .gguf file
    provenance: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.provenance["name"])

    @property
    def quant_type(self) -> str:
        return str(self.provenance["type"])

    @property
    def sha256(self) -> str:
        return str(self.provenance["sha256"])

    @property
    def size_bytes(self) -> int:
        return int(self.provenance["size_bytes"])

    @property
    def source(self) -> dict[str, Any]:
        return dict(self.provenance["source"])

    @property
    def requantized(self) -> bool:
        return bool(self.provenance.get("requantized"))

    @property
    def note(self) -> str | None:
        note = self.provenance.get("note")
        return note if isinstance(note, str) else None


def read_quantized(base: str, quant_type: str) -> QuantizedModel:
    """The variant's provenance file, checked for the fields edgebench reads."""
    path = provenance_file(base, quant_type)
    if not present(path):
        raise UserError(f"{path}: no such file (quantize with `edgebench models quantize`)")
    data = read_json(path, "the provenance file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not an edgebench quantization record (format {FORMAT})")
    for key in ("name", "type", "sha256", "size_bytes", "source"):
        if key not in data:
            raise UserError(f"{path}: field '{key}' is missing")
    return QuantizedModel(variant_file(base, quant_type), data)


def verify_quantized(model: QuantizedModel) -> str | None:
    """None when the file's size and sha256 match its provenance, else what differs (the
    hash is remembered per size and mtime, so this is cheap after the first time)."""
    if not model.path.is_file():
        return f"{model.path.name} is missing"
    size = model.path.stat().st_size
    if size != model.size_bytes:
        return f"{model.path.name} is {size} bytes, its record says {model.size_bytes}"
    digest = sha256_file(model.path)
    if digest != model.sha256:
        return f"{model.path.name} sha256 is {digest}, its record says {model.sha256}"
    return None


def quantized_state(base: str, quant_type: str) -> QuantState:
    """Is the variant's file there, as its provenance file describes it?"""
    if not variant_file(base, quant_type).is_file():
        return "no"
    try:
        model = read_quantized(base, quant_type)
    except UserError:
        return "corrupt"
    return "yes" if verify_quantized(model) is None else "corrupt"


def quantized_variants() -> list[tuple[str, str]]:
    """(base name, type) of every quantized file in the cache, sorted by base and then
    by precision, most precise first."""
    root = quantized_root()
    found = []
    if root.is_dir():
        for path in root.glob("*.gguf"):
            variant = split_quant_variant(path.stem)
            if variant is not None and not path.name.startswith("."):
                found.append(variant)
    return sorted(found, key=lambda v: (v[0], -precision_rank(v[1]), v[1]))
