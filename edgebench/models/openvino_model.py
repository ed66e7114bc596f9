"""OpenVINO GenAI models: a registry GGUF read directly, or an exported folder.

Two spellings name a model for the `openvino` runtime:

- `NAME@openvino`: the registry's GGUF file, as pulled, read by OpenVINO GenAI itself
  (a preview feature for a few topologies, SmolLM2 and Qwen2.5 among them);
- `NAME@openvino-int4|int8|fp16`: the folder `<model cache>/openvino/NAME-PRECISION/`
  that `edgebench models convert NAME --to openvino --precision P` writes, or the path of
  such a folder.

A folder holds what `LLMPipeline` reads (`FOLDER_FILES`) and `edgebench-openvino.json`,
its provenance: a JSON object with at least `source_gguf_sha256` (the GGUF the weights
came from), `precision` (one of PRECISIONS) and `weights_bytes` (the size of
openvino_model.bin). Optional: `name`, `context_length`, `source` (architecture,
parameters) and `prompt` (style, chat_template, bos_token, eos_token, stop, as in the
ONNX provenance); without `prompt` the prompt format is the source GGUF's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.paths import model_cache_dir
from edgebench.readback import json_type, present, read_json_object

RUNTIME = "openvino"
PROVENANCE = "edgebench-openvino.json"
PRECISIONS = ("int4", "int8", "fp16")
MODEL_XML = "openvino_model.xml"
MODEL_BIN = "openvino_model.bin"
# What LLMPipeline reads from an exported folder.
FOLDER_FILES = (
    MODEL_XML,
    MODEL_BIN,
    "openvino_tokenizer.xml",
    "openvino_tokenizer.bin",
    "openvino_detokenizer.xml",
    "openvino_detokenizer.bin",
    "config.json",
    "generation_config.json",
)
_SHA256_LENGTH = 64


def variant_suffix(precision: str | None) -> str:
    """None (the GGUF read directly) -> `openvino`; `int4` -> `openvino-int4`."""
    return RUNTIME if precision is None else f"{RUNTIME}-{precision}"


def variant_name(base: str, precision: str | None) -> str:
    return f"{base}@{variant_suffix(precision)}"


def known_variants() -> list[str]:
    return [variant_suffix(None), *(variant_suffix(p) for p in PRECISIONS)]


def split_openvino_variant(spec: str) -> tuple[str, str | None] | None:
    """`NAME@openvino` -> (NAME, None); `NAME@openvino-int4` -> (NAME, "int4"); None when
    `spec` names no OpenVINO variant. `NAME@openvino-x` is a UserError naming the known
    ones."""
    base, at, suffix = spec.rpartition("@")
    if not at or not base:
        return None
    if suffix == RUNTIME:
        return base, None
    if not suffix.startswith(f"{RUNTIME}-"):
        return None
    precision = suffix.removeprefix(f"{RUNTIME}-")
    if precision not in PRECISIONS:
        raise UserError(
            f"model {spec!r}: unknown variant '@{suffix}' (known: {', '.join(known_variants())})"
        )
    return base, precision


def openvino_root() -> Path:
    return model_cache_dir() / RUNTIME


def variant_dir(base: str, precision: str) -> Path:
    return openvino_root() / f"{base}-{precision}"


def converted_variants() -> list[tuple[str, str]]:
    """(base name, precision) of every folder in the OpenVINO cache, sorted."""
    root = openvino_root()
    found = []
    if root.is_dir():
        for folder in sorted(root.iterdir()):
            base, _, precision = folder.name.rpartition("-")
            if base and precision in PRECISIONS and (folder / PROVENANCE).is_file():
                found.append((base, precision))
    return found


def convert_command(base: str, precision: str) -> str:
    return f"edgebench models convert {base} --to {RUNTIME} --precision {precision}"


def not_converted(base: str, precision: str) -> UserError:
    """A `NAME@openvino-P` whose folder is not there: the command that makes it."""
    return UserError(
        f"model {variant_name(base, precision)!r} is not converted yet: run "
        f"`{convert_command(base, precision)}`"
    )


def is_folder(path: Path) -> bool:
    """Whether `path` is a folder holding an OpenVINO provenance file."""
    return path.is_dir() and (path / PROVENANCE).is_file()


@dataclass(frozen=True)
class OpenVinoModel:
    """What the openvino runtime loads: an exported folder with its provenance, or a
    GGUF file (then `provenance` is None)."""

    path: Path
    provenance: dict[str, Any] | None = None

    @property
    def exported(self) -> bool:
        return self.provenance is not None

    def _field(self, key: str) -> Any:
        return (self.provenance or {}).get(key)

    @property
    def precision(self) -> str | None:
        return self._field("precision")

    @property
    def source_sha256(self) -> str | None:
        return self._field("source_gguf_sha256")

    @property
    def weights_bytes(self) -> int | None:
        return self._field("weights_bytes")

    @property
    def prompt(self) -> dict[str, Any] | None:
        """The prompt format the folder records; None: the source GGUF's."""
        prompt = self._field("prompt")
        return dict(prompt) if isinstance(prompt, dict) else None

    @property
    def weights(self) -> Path:
        return self.path / MODEL_BIN if self.exported else self.path


def _check_fields(path: Path, data: dict[str, Any]) -> None:
    sha = data.get("source_gguf_sha256")
    if not isinstance(sha, str) or len(sha) != _SHA256_LENGTH:
        raise UserError(
            f"{path}: 'source_gguf_sha256' must be the source GGUF's 64-character sha256"
            + ("" if "source_gguf_sha256" in data else " (missing)")
        )
    precision = data.get("precision")
    if precision not in PRECISIONS:
        raise UserError(
            f"{path}: 'precision' must be one of {', '.join(PRECISIONS)}, not "
            f"{precision!r}" + ("" if "precision" in data else " (missing)")
        )
    size = data.get("weights_bytes")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise UserError(
            f"{path}: 'weights_bytes' must be a positive integer, not {json_type(size)}"
            + ("" if "weights_bytes" in data else " (missing)")
        )
    prompt = data.get("prompt")
    if prompt is not None and not isinstance(prompt, dict):
        raise UserError(f"{path}: 'prompt' must be a JSON object, got {json_type(prompt)}")


def read_folder(folder: Path) -> OpenVinoModel:
    """An exported folder, checked before OpenVINO reads a byte: the provenance file's
    fields, every file LLMPipeline needs, and openvino_model.bin's size against
    `weights_bytes`. Each problem is one line naming the file."""
    path = folder / PROVENANCE
    if not present(path):
        raise UserError(
            f"{folder}: not an OpenVINO model folder (no {PROVENANCE}); create one with "
            f"`edgebench models convert NAME --to {RUNTIME} --precision "
            f"{'|'.join(PRECISIONS)}`"
        )
    data = read_json_object(path, "the OpenVINO provenance file")
    _check_fields(path, data)
    for name in FOLDER_FILES:
        if not (folder / name).is_file():
            raise UserError(f"{folder / name}: missing (OpenVINO GenAI needs it to load)")
    model = OpenVinoModel(path=folder, provenance=data)
    size = model.weights.stat().st_size
    if size != model.weights_bytes:
        raise UserError(
            f"{model.weights}: {size} bytes, {PROVENANCE} says {model.weights_bytes}: "
            "the export is damaged or incomplete; convert it again with --force"
        )
    return model


def read_variant(base: str, precision: str) -> OpenVinoModel:
    """`NAME@openvino-P` from the cache, or the command that makes it."""
    folder = variant_dir(base, precision)
    if not (folder / PROVENANCE).is_file():
        raise not_converted(base, precision)
    return read_folder(folder)


def context_length(model: OpenVinoModel) -> int | None:
    """The training context: the provenance's, else config.json's
    max_position_embeddings (a GGUF says it in its header: None here)."""
    if not model.exported:
        return None
    recorded = model._field("context_length")
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        return recorded
    config = read_json_object(model.path / "config.json", "the model's config.json")
    value = config.get("max_position_embeddings")
    return value if isinstance(value, int) and not isinstance(value, bool) else None
