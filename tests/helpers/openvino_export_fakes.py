"""Converted OpenVINO folders without optimum-intel or a model: the files an export
writes (IR, tokenizer and detokenizer, configs), a folder as `models convert --to
openvino` leaves it in the model cache, and one that model resolution accepts."""

from __future__ import annotations

import json
from pathlib import Path

from edgebench.models.hashing import sha256_file
from edgebench.models.openvino_convert import (
    DETOKENIZER_XML,
    FORMAT,
    MODEL_BIN,
    MODEL_XML,
    PROVENANCE,
    TOKENIZER_XML,
    variant_name,
)
from edgebench.models.openvino_model import FOLDER_FILES

EXPORT_FILES = (MODEL_XML, MODEL_BIN, TOKENIZER_XML, DETOKENIZER_XML)
BASE = "smollm2-135m-instruct"
TEMPLATE = "{% for m in messages %}<|im_start|>{{ m['content'] }}<|im_end|>{% endfor %}"


def fake_export_files(out_dir: Path, weights: bytes = b"\1" * 64) -> None:
    """What optimum-intel's export writes: the IR pair, the tokenizer pair, configs."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MODEL_XML).write_text("<net name='fake'/>")
    (out_dir / MODEL_BIN).write_bytes(weights)
    for name in (TOKENIZER_XML, DETOKENIZER_XML):
        (out_dir / name).write_text("<net/>")
    (out_dir / "openvino_tokenizer.bin").write_bytes(b"\2" * 8)
    (out_dir / "openvino_config.json").write_text("{}")
    (out_dir / "config.json").write_text(json.dumps({"model_type": "llama"}))


def fake_openvino_converted(
    cache: Path, base: str = "smollm2-135m-instruct", precision: str = "int4"
) -> Path:
    """A converted folder in the model cache `cache` with a provenance file that
    matches its weights."""
    folder = cache / "models" / "openvino" / f"{base}-{precision}"
    fake_export_files(folder)
    provenance = {
        "format": FORMAT,
        "name": variant_name(base, precision),
        "precision": precision,
        "weights": {
            "file": MODEL_BIN,
            "sha256": sha256_file(folder / MODEL_BIN),
            "graph": MODEL_XML,
            "size_bytes": sum((folder / f).stat().st_size for f in (MODEL_XML, MODEL_BIN)),
        },
    }
    (folder / PROVENANCE).write_text(json.dumps(provenance))
    return folder


def exported(folder: Path, **provenance: object) -> Path:
    """A folder as `models convert --to openvino` leaves it, files of a few bytes, with a
    provenance resolution accepts (`provenance` overrides its fields)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in FOLDER_FILES:
        (folder / name).write_bytes(b"{}" if name.endswith(".json") else b"x" * 8)
    record = {
        "name": f"{BASE}@openvino-int4",
        "source_gguf_sha256": "a" * 64,
        "precision": "int4",
        "weights_bytes": 8,
        "context_length": 8192,
        "source": {"architecture": "llama", "parameters": 134515008},
        "prompt": {"style": "chat", "chat_template": TEMPLATE, "eos_token": "<|im_end|>"},
        **provenance,
    }
    (folder / PROVENANCE).write_text(json.dumps(record))
    return folder
