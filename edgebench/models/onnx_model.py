"""Converted ONNX models in the model cache: names, folders and their provenance file.

`edgebench models convert NAME --to onnx --precision int4` writes the folder
`<model cache>/onnx/NAME-int4/`; everywhere a model is named it is `NAME@onnx-int4`. The
folder holds the ONNX graph, the tokenizer, the chat template and `edgebench-onnx.json`,
which says where the weights came from (the GGUF's sha256), how they were converted (tool
versions, quantization) and how to prompt the model (template, special tokens), so the
runtime needs neither the GGUF nor transformers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from edgebench.errors import UserError
from edgebench.models.hashing import sha256_file
from edgebench.models.quant_types import usable_types
from edgebench.paths import model_cache_dir
from edgebench.readback import present, read_json

PRECISIONS = ("fp32", "int4")
# How `models convert` writes the graph (models/convert.py): edgebench's own fused llama
# graph (models/onnx_graph.py) or optimum's export.
GRAPHS = ("gqa", "optimum")
# The output layer of an int4 gqa graph: float32 (the default: greedy tokens as optimum's
# int4 gave them) or 4-bit like the other weights (faster, different tokens).
LM_HEADS = ("float32", "int4")


def default_graph(architecture: str | None) -> str:
    """gqa where edgebench can write it (the llama architecture), else optimum's export."""
    return "gqa" if architecture == "llama" else "optimum"


RUNTIME = "onnx"
PROVENANCE = "edgebench-onnx.json"
FORMAT = "edgebench-onnx/1"
GRAPH = "model.onnx"
TOKENIZER = "tokenizer.json"
CHAT_TEMPLATE = "chat_template.jinja"

OnnxState = Literal["yes", "no", "corrupt"]


def variant_suffix(precision: str) -> str:
    return f"{RUNTIME}-{precision}"


def variant_name(base: str, precision: str) -> str:
    """`smollm2-135m-instruct` + `int4` -> `smollm2-135m-instruct@onnx-int4`."""
    return f"{base}@{variant_suffix(precision)}"


def split_variant(spec: str) -> tuple[str, str] | None:
    """`NAME@onnx-int4` -> (NAME, "int4"); None when `spec` names no variant. A variant
    the tool does not know is a UserError listing the ones it does."""
    if "@" not in spec:
        return None
    base, _, variant = spec.rpartition("@")
    known = [variant_suffix(p) for p in PRECISIONS]
    if not base or variant not in known:
        raise UserError(
            f"model {spec!r}: unknown variant '@{variant}' (known: {', '.join(known)}, or a "
            f"llama.cpp type made by `edgebench models quantize`: {', '.join(usable_types())})"
        )
    return base, variant.removeprefix(f"{RUNTIME}-")


def onnx_root() -> Path:
    return model_cache_dir() / RUNTIME


def variant_dir(base: str, precision: str) -> Path:
    return onnx_root() / f"{base}-{precision}"


@dataclass(frozen=True)
class OnnxModel:
    """A converted model folder as read from its provenance file."""

    folder: Path
    provenance: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.provenance["name"])

    @property
    def graph(self) -> Path:
        return self.folder / GRAPH

    @property
    def sha256(self) -> str:
        return str(self.provenance["weights"]["sha256"])

    @property
    def size_bytes(self) -> int:
        """The weights on disk: the graph plus any external-data files."""
        return int(self.provenance["weights"]["size_bytes"])

    @property
    def graph_kind(self) -> str:
        """One of GRAPHS; folders converted before the gqa graph existed are optimum's."""
        return str((self.provenance.get("export") or {}).get("graph") or "optimum")

    @property
    def prompt(self) -> dict[str, Any]:
        return dict(self.provenance["prompt"])

    @property
    def tokens(self) -> dict[str, Any]:
        return dict(self.provenance["tokens"])


def read_provenance(folder: Path) -> OnnxModel:
    """The folder's provenance file, checked for the fields the runtime reads."""
    path = folder / PROVENANCE
    if not present(path):
        raise UserError(
            f"{folder}: not a converted ONNX model folder (no {PROVENANCE}); "
            "create one with `edgebench models convert NAME --to onnx`"
        )
    data = read_json(path, "the provenance file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not an edgebench ONNX provenance file (format {FORMAT})")
    for key in ("name", "weights", "prompt", "tokens"):
        if key not in data:
            raise UserError(f"{path}: field '{key}' is missing")
    return OnnxModel(folder=folder, provenance=data)


def weights_files(folder: Path, provenance: dict[str, Any]) -> list[Path]:
    return [folder / GRAPH, *(folder / f for f in provenance["weights"].get("external_data", []))]


def onnx_state(base: str, precision: str) -> OnnxState:
    """Is the converted folder there with the weights its provenance file describes?"""
    folder = variant_dir(base, precision)
    if not (folder / PROVENANCE).is_file():
        return "no"
    try:
        model = read_provenance(folder)
    except UserError:
        return "corrupt"
    return "yes" if verify_weights(model) is None else "corrupt"


def verify_weights(model: OnnxModel) -> str | None:
    """None when the graph's sha256 and the weights' size match the provenance file, else
    what differs (the hash is remembered per size and mtime, so this is cheap after the
    first time)."""
    files = weights_files(model.folder, model.provenance)
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        return f"missing {', '.join(missing)}"
    size = sum(f.stat().st_size for f in files)
    if size != model.size_bytes:
        return f"weights are {size} bytes, the provenance file says {model.size_bytes}"
    digest = sha256_file(model.graph)
    if digest != model.sha256:
        return f"{GRAPH} sha256 is {digest}, the provenance file says {model.sha256}"
    return None


def converted_variants() -> list[tuple[str, str]]:
    """(base name, precision) of every folder in the ONNX cache, sorted."""
    root = onnx_root()
    found = []
    if root.is_dir():
        for folder in sorted(root.iterdir()):
            base, _, precision = folder.name.rpartition("-")
            if precision in PRECISIONS and (folder / PROVENANCE).is_file():
                found.append((base, precision))
    return found
