"""`models convert NAME --to openvino --precision int4|int8|fp16`: a registry GGUF ->
transformers -> OpenVINO IR with a stateful KV cache and OpenVINO tokenizers, the
weights at `precision`.

Steps:
1. transformers reads the GGUF and de-quantizes it to float32 (models/hf_folder.py, as
   for ONNX); saved as a plain transformers folder in a temporary directory.
2. optimum-intel exports it (`main_export`, task `text-generation-with-past`, the
   tokenizer and detokenizer converted by openvino-tokenizers) and the weights are
   compressed as `optimum-cli export openvino --weight-format` does: `fp16` the IR saved
   with float16 weights; `int8` and `int4` NNCF on the float32 IR, `int8` weight-only
   int8 (asymmetric, per output channel), `int4` weight-only int4, data-free (no
   calibration set, every eligible layer: ratio 1.0), symmetric, in groups of
   INT4_GROUP_SIZE. NNCF keeps the embedding and the output layer at its int8 backup
   precision unless `all_layers`.
   The settings are in the provenance (`quantization`).
   Before the export, the transformers folder's tokenizer is aligned with the GGUF
   (`aligned_tokenizer`): transformers' GGUF reader gets SmolLM2's BOS, EOS and decoder
   wrong, and OpenVINO GenAI reads them from the converted tokenizer.
The folder is `<model cache>/openvino/NAME-PRECISION/` (`NAME@openvino-PRECISION`) and
loads with `openvino_genai.LLMPipeline(folder, "CPU")`. Everything happens in a private
folder beside it, renamed into place once the provenance file is written, so a failed
conversion leaves nothing behind. No network: HF_HUB_OFFLINE=1 on local files.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from edgebench.errors import UserError
from edgebench.io import write_text_atomic
from edgebench.models.conversion import (
    already_converted,
    converted_line,
    copy_into,
    gguf_prompt,
    gguf_source,
    gguf_tokens,
    private_workdir,
    publish,
    require_registry,
    write_chat_template,
)
from edgebench.models.gguf import GGUFFile, kv_cache_bytes_per_token, read_gguf
from edgebench.models.hashing import sha256_file
from edgebench.models.hf_folder import Say, first_line, gguf_to_transformers, timed_step
from edgebench.models.openvino_model import (
    MODEL_BIN,
    MODEL_XML,
    PRECISIONS,
    PROVENANCE,
    RUNTIME,
    split_openvino_variant,
    variant_dir,
    variant_name,
)
from edgebench.models.resolve import resolve_model
from edgebench.readback import present, read_json, read_json_object
from edgebench.system.versions import package_versions, utc_now

# The folder layout is the runtime's (models/openvino_model.py), named once there.
TARGET = RUNTIME  # the `models convert --to` target, the cache folder, the @ suffix
FORMAT = "edgebench-openvino/1"
TOKENIZER_XML = "openvino_tokenizer.xml"
DETOKENIZER_XML = "openvino_detokenizer.xml"
CHAT_TEMPLATE = "chat_template.jinja"
TASK = "text-generation-with-past"

# 64 divides every projection of the small models edgebench targets (SmolLM2's hidden
# size 576 is not a multiple of NNCF's default 128).
INT4_GROUP_SIZE = 64
# OVWeightQuantizationConfig's arguments per precision (None: float16 weights, no NNCF).
WEIGHT_CONFIGS: dict[str, dict[str, Any] | None] = {
    "fp16": None,
    "int8": {"bits": 8, "sym": False, "group_size": -1, "ratio": 1.0},
    "int4": {"bits": 4, "sym": True, "group_size": INT4_GROUP_SIZE, "ratio": 1.0},
}

CONVERT_EXTRA_HINT = "pip install 'edgebench[convert]'"
# The distributions the steps import, checked by their installed metadata (nothing
# imported, no library's warnings) so a missing one fails in a second.
REQUIRED = (
    "torch",
    "transformers",
    "accelerate",
    "gguf",
    "optimum-intel",
    "nncf",
    "openvino",
    "openvino-tokenizers",
)
TOOLS = (
    "optimum-intel",
    "optimum",
    "nncf",
    "openvino",
    "openvino-tokenizers",
    "transformers",
    "torch",
    "gguf",
    "tokenizers",
)
# NNCF and optimum-intel log every compressed layer and a statistics table at INFO.
_QUIET = ("nncf", "optimum.exporters.openvino", "optimum.intel")

OpenVinoState = Literal["yes", "no", "corrupt"]


def split_variant(spec: str) -> tuple[str, str] | None:
    """`NAME@openvino-int4` -> (NAME, "int4"); None for anything else, an unknown
    precision and the GGUF read directly (`NAME@openvino`: nothing to convert) included."""
    try:
        split = split_openvino_variant(spec)
    except UserError:
        return None
    if split is None or split[1] is None:
        return None
    return split[0], split[1]


@dataclass(frozen=True)
class OpenVinoExport:
    """A converted folder as `models convert` leaves it: its provenance file read."""

    folder: Path
    provenance: dict[str, Any]

    @property
    def size_bytes(self) -> int:
        return int(self.provenance["weights"]["size_bytes"])


def read_export(folder: Path) -> OpenVinoExport:
    """The folder's provenance file, checked for the fields a conversion writes."""
    path = folder / PROVENANCE
    if not present(path):
        raise UserError(
            f"{folder}: not a converted OpenVINO model folder (no {PROVENANCE}); "
            "create one with `edgebench models convert NAME --to openvino`"
        )
    data = read_json(path, "the provenance file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not an edgebench OpenVINO provenance file (format {FORMAT})")
    weights = data.get("weights")
    if not isinstance(weights, dict) or not {"sha256", "size_bytes"} <= weights.keys():
        raise UserError(f"{path}: field 'weights' is missing or incomplete")
    return OpenVinoExport(folder, data)


def export_state(base: str, precision: str) -> OpenVinoState:
    """Is the converted folder there with the weights its provenance file describes?"""
    folder = variant_dir(base, precision)
    if not (folder / PROVENANCE).is_file():
        return "no"
    try:
        done = read_export(folder)
    except UserError:
        return "corrupt"
    files = [folder / MODEL_XML, folder / MODEL_BIN]
    if not all(f.is_file() for f in files):
        return "corrupt"
    # the size first: a cheap check; the hash is remembered per size and mtime
    if sum(f.stat().st_size for f in files) != done.size_bytes:
        return "corrupt"
    weights = sha256_file(folder / MODEL_BIN)
    return "yes" if weights == done.provenance["weights"]["sha256"] else "corrupt"


def check_openvino_extras() -> None:
    """A one-line UserError naming what is missing and how to install it."""
    missing = []
    for name in REQUIRED:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        raise UserError(f"converting to OpenVINO needs {', '.join(missing)}: {CONVERT_EXTRA_HINT}")


def quantization(precision: str) -> dict[str, Any]:
    """What the export did to the weights, as the provenance records it."""
    config = WEIGHT_CONFIGS[precision]
    if config is None:
        return {"method": "fp16", "dtype": "float16"}
    recorded = {
        "method": "nncf.compress_weights",
        **config,
        "dataset": None,  # data-free: no calibration set, no AWQ or GPTQ
    }
    if config["bits"] == 4:
        # the embedding and the output layer at NNCF's int8 backup precision
        recorded |= {"all_layers": False, "backup_precision": "int8_asym"}
    return recorded


def convert(
    name: str,
    precision: str,
    *,
    force: bool = False,
    threads: int | None = None,
    say: Say = print,
) -> OpenVinoExport:
    """Convert registry model `name` to OpenVINO IR at `precision` into the model cache."""
    if precision not in PRECISIONS:
        raise UserError(
            f"--precision: {precision!r} is not one of: {', '.join(PRECISIONS)} (for --to {TARGET})"
        )
    target = variant_dir(name, precision)
    label = variant_name(name, precision)
    if not force and export_state(name, precision) == "yes":
        done = read_export(target)
        if done.provenance.get("quantization") == quantization(precision):
            say(already_converted(label, target))
            return done
        say(f"{label}: converted with other settings; converting again")
    check_openvino_extras()
    source = resolve_model(name)
    require_registry(name, source)
    header = read_gguf(source.path)
    steps: dict[str, float] = {}
    with private_workdir(target, threads, _QUIET) as tmp:
        hf_dir, out_dir = tmp / "hf", tmp / "out"
        with timed_step(steps, "gguf_to_transformers", say, f"{label}: reading {source.path.name}"):
            gguf_to_transformers(source.path, hf_dir)
            align_tokenizer(hf_dir, header)
        check_architecture(name, hf_dir)
        message = f"{label}: exporting to OpenVINO IR with KV cache ({describe(precision)})"
        with timed_step(steps, "openvino_export", say, message):
            export(hf_dir, out_dir, precision)
        _copy_side_files(hf_dir, out_dir)
        for needed in (MODEL_XML, MODEL_BIN, TOKENIZER_XML, DETOKENIZER_XML):
            if not (out_dir / needed).is_file():
                raise UserError(f"{label}: the export wrote no {needed}")
        provenance = _provenance(label, precision, source, header, out_dir, steps)
        publish(out_dir, target, PROVENANCE, provenance)
    done = read_export(target)
    say(converted_line(label, done.size_bytes, steps, target))
    return done


def describe(precision: str) -> str:
    """The weights step in a progress line: `int4 weights: NNCF, symmetric, group 64`."""
    config = WEIGHT_CONFIGS[precision]
    if config is None:
        return "fp16 weights"
    groups = "per channel" if config["group_size"] < 0 else f"group {config['group_size']}"
    kind = "symmetric" if config["sym"] else "asymmetric"
    return f"int{config['bits']} weights: NNCF, {kind}, {groups}"


def supported_model_types() -> frozenset[str]:
    """The transformers model types optimum-intel exports for text generation with a KV
    cache (its TasksManager, once its OpenVINO exporter has registered them)."""
    import optimum.exporters.openvino  # noqa: F401  (registers the exporter's model types)
    from optimum.exporters.tasks import TasksManager

    found = set()
    for model_type in TasksManager._SUPPORTED_MODEL_TYPE:
        try:
            tasks = TasksManager.get_supported_tasks_for_model_type(
                model_type, exporter="openvino", library_name="transformers"
            )
        except KeyError:
            continue
        if TASK in tasks:
            found.add(model_type.replace("-", "_"))
    return frozenset(found)


def check_architecture(name: str, hf_dir: Path) -> None:
    """A model type optimum-intel cannot export is one line before the export starts."""
    config = read_json_object(hf_dir / "config.json", "the transformers config")
    model_type = str(config.get("model_type"))
    if model_type.replace("-", "_") not in supported_model_types():
        raise UserError(
            f"{name!r}: optimum-intel cannot export the {model_type!r} architecture to "
            "OpenVINO for text generation"
        )


def weight_config(precision: str) -> dict[str, Any] | None:
    """The weight compression as `optimum-cli export openvino --weight-format` builds it."""
    config = WEIGHT_CONFIGS[precision]
    return None if config is None else {**config, "dtype": precision}


def export(hf_dir: Path, out_dir: Path, precision: str) -> None:
    """optimum-intel's export of the transformers folder with the OpenVINO tokenizer and
    detokenizer, then the weights compressed: the steps of `optimum-cli export openvino
    --weight-format PRECISION` (float32 IR, then NNCF on it; fp16 written as such)."""
    from optimum.exporters.openvino import main_export
    from optimum.exporters.openvino.__main__ import _main_quantize
    from optimum.intel import OVConfig

    quantize = weight_config(precision)
    ov_config = (
        OVConfig(dtype="fp16") if quantize is None else OVConfig(quantization_config=quantize)
    )
    try:
        with _silent_stdout():
            main_export(
                str(hf_dir),
                str(out_dir),
                task=TASK,
                library_name="transformers",
                local_files_only=True,
                ov_config=ov_config,
                convert_tokenizer=True,
            )
            if quantize is not None:
                _main_quantize(
                    str(hf_dir),
                    TASK,
                    "transformers",
                    quantize,
                    out_dir,
                    cache_dir=str(hf_dir.parent / "hub"),  # never read: local files only
                )
    except UserError:
        raise
    except Exception as exc:  # the exporter raises many types; the first line says why
        raise UserError(f"optimum-intel could not export to OpenVINO: {first_line(exc)}") from None


@contextlib.contextmanager
def _silent_stdout() -> Iterator[None]:
    """NNCF prints progress bars and a table per model on stdout, where the command
    prints the folder: both muted (its logger is set up on import, so after the import)."""
    with contextlib.suppress(ImportError):
        import nncf  # noqa: F401

    logger = logging.getLogger("nncf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logger.setLevel(level)


def _copy_side_files(hf_dir: Path, out_dir: Path) -> None:
    """The transformers tokenizer and config files the export did not write itself (a
    reader of the folder needs no GGUF and no transformers folder)."""
    for item in hf_dir.iterdir():
        if item.is_file() and item.suffix != ".safetensors" and not (out_dir / item.name).exists():
            copy_into(item, out_dir)


def _provenance(
    label: str,
    precision: str,
    source: Any,
    header: GGUFFile,
    out_dir: Path,
    steps: dict[str, float],
) -> dict[str, Any]:
    write_chat_template(out_dir / CHAT_TEMPLATE, header)
    size = (out_dir / MODEL_XML).stat().st_size + (out_dir / MODEL_BIN).stat().st_size
    return {
        "format": FORMAT,
        "name": label,
        "base_model": source.label,
        "runtime": TARGET,
        "precision": precision,
        # what the runtime's folder reader checks first (models/openvino_model.py)
        "source_gguf_sha256": source.sha256,
        "weights_bytes": (out_dir / MODEL_BIN).stat().st_size,
        "created_at": utc_now(),
        "source": gguf_source(source, header),
        "weights": {
            "file": MODEL_BIN,
            "sha256": sha256_file(out_dir / MODEL_BIN),
            "graph": MODEL_XML,
            "graph_sha256": sha256_file(out_dir / MODEL_XML),
            "size_bytes": size,  # graph and weights
        },
        "quantization": quantization(precision),
        "context_length": header.context_length,
        # The KV cache's precision is the runtime's choice at load (OpenVINO's CPU plugin
        # may keep it in u8); llama.cpp's f16 figure, for the memory pre-check.
        "kv_cache": {"bytes_per_token_f16": kv_cache_bytes_per_token(header.metadata)},
        "prompt": gguf_prompt(source, header),
        "tokens": gguf_tokens(header),
        "export": {
            "task": TASK,
            "stateful": True,
            "tokenizer": [TOKENIZER_XML, DETOKENIZER_XML],
            "steps_s": steps,
        },
        "tools": package_versions(TOOLS),
    }


# A byte-level BPE vocabulary (GPT-2's): its tokens are bytes mapped to printable
# characters, decoded by the ByteLevel decoder alone.
_BYTE_LEVEL_DECODER = {
    "type": "ByteLevel",
    "add_prefix_space": True,
    "trim_offsets": True,
    "use_regex": True,
}


def aligned_tokenizer(
    tokenizer: dict[str, Any], config: dict[str, Any], header: GGUFFile
) -> tuple[dict[str, Any], dict[str, Any]]:
    """tokenizer.json and tokenizer_config.json as the GGUF says, where transformers'
    GGUF reader says otherwise: for a llama-architecture GGUF with a GPT-2 vocabulary
    (SmolLM2) it writes SentencePiece's decoder steps before the byte-level one (which
    openvino-tokenizers cannot convert), a BOS the GGUF does not add, and BOS as EOS.
    The BOS is added only when the GGUF asks for it, EOS is the GGUF's."""
    specials = header.special_tokens()
    add_bos = bool(header.add_bos_token)
    bos, bos_id = specials["bos_token"], header.token_id("bos")
    tokenizer = dict(tokenizer)
    if header.metadata.get("tokenizer.ggml.model") == "gpt2":
        tokenizer["decoder"] = dict(_BYTE_LEVEL_DECODER)
    single: list[dict[str, Any]] = [{"Sequence": {"id": "A", "type_id": 0}}]
    pair = [*single, {"Sequence": {"id": "B", "type_id": 1}}]
    special: dict[str, Any] = {}
    if add_bos and bos is not None and bos_id is not None:
        single = [{"SpecialToken": {"id": bos, "type_id": 0}}, *single]
        pair = [{"SpecialToken": {"id": bos, "type_id": 0}}, *pair]
        special = {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}
    tokenizer["post_processor"] = {
        "type": "TemplateProcessing",
        "single": single,
        "pair": pair,
        "special_tokens": special,
    }
    config = {**config, "add_bos_token": add_bos, "add_eos_token": False}
    for key in ("bos_token", "eos_token"):
        if specials[key] is not None:
            config[key] = specials[key]
            config[f"{key}_id"] = header.token_id(key.removesuffix("_token"))
    return tokenizer, config


def align_tokenizer(hf_dir: Path, header: GGUFFile) -> None:
    """The transformers folder's tokenizer files rewritten by `aligned_tokenizer`."""
    import json

    files = [hf_dir / "tokenizer.json", hf_dir / "tokenizer_config.json"]
    tokenizer, config = aligned_tokenizer(
        read_json_object(files[0], "the transformers tokenizer"),
        read_json_object(files[1], "the transformers tokenizer config"),
        header,
    )
    for path, data in zip(files, (tokenizer, config), strict=True):
        write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2))
    special_map = hf_dir / "special_tokens_map.json"
    if special_map.is_file():
        specials = read_json_object(special_map, "the special tokens map")
        specials.update({k: config[k] for k in ("bos_token", "eos_token") if k in config})
        write_text_atomic(special_map, json.dumps(specials, ensure_ascii=False, indent=2))
