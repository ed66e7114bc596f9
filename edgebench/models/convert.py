"""`models convert NAME --to onnx`: a registry GGUF -> transformers -> ONNX with KV cache ->
optionally 4-bit weights (onnxruntime MatMulNBits).

Steps (measured on SmolLM2-135M, 2 cores: about 1 minute in all):
1. transformers reads the GGUF and de-quantizes it to float32 (`gguf_file=`), with its
   tokenizer; saved as a plain transformers folder in a temporary directory.
2. The graph (inputs input_ids, attention_mask, position_ids, past_key_values.N.key/value;
   outputs logits and present.N.*), one of GRAPHS:
   `gqa` (the default for the llama architecture): edgebench writes it from the weights with
   onnxruntime's fused operators (models/onnx_graph.py), 1.6-1.8x optimum's tg128 on SmolLM2;
   `optimum` (the default otherwise): optimum's `text-generation-with-past` export, any
   architecture it knows.
3. `int4`: MatMulNBitsQuantizer, 4 bits, block size 32, symmetric (the recipe that gave
   sane output here; dynamic int8 degraded it), on every MatMul with a constant weight
   but the output layer. optimum's graph reads the tied embedding through a Transpose,
   which the quantizer cannot take; the gqa graph's output layer is a MatMul of its own,
   kept float32 by default (the same greedy tokens as optimum's int4) or 4-bit with
   `lm_head="int4"` (faster still, other tokens: docs/performance.md).
The graph kind and what was quantized are recorded in the provenance (`export.graph`,
`quantization`), which every run record's model block carries.
Everything happens in a private folder beside the destination, which is renamed into
place once the provenance file is written, so a failed conversion leaves nothing behind.
No network: transformers and optimum run with HF_HUB_OFFLINE=1 on local files.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import WriteFailed
from edgebench.models import openvino_convert
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
from edgebench.models.onnx_check import check_model_file
from edgebench.models.onnx_model import (
    CHAT_TEMPLATE,
    FORMAT,
    GRAPH,
    GRAPHS,
    LM_HEADS,
    PRECISIONS,
    PROVENANCE,
    RUNTIME,
    TOKENIZER,
    OnnxModel,
    default_graph,
    onnx_state,
    read_provenance,
    variant_dir,
    variant_name,
)
from edgebench.models.resolve import resolve_model
from edgebench.system.versions import package_versions, utc_now

CONVERT_EXTRA_HINT = "pip install 'edgebench[convert]'"
# The quantizer logs a line per node at INFO.
_QUIET = ("onnxruntime.quantization.matmul_nbits_quantizer",)
INT4 = {"method": "MatMulNBits", "bits": 4, "block_size": 32, "symmetric": True}
TOOLS = (
    "torch",
    "transformers",
    "optimum",
    "optimum-onnx",
    "onnx",
    "onnxruntime",
    "accelerate",
    "gguf",
    "tokenizers",
)
# The distributions the steps import, checked up front (by their installed metadata, so
# nothing is imported and no library prints its own warnings) to fail in a second.
REQUIRED = (
    "torch",
    "transformers",
    "optimum-onnx",
    "accelerate",
    "gguf",
    "onnx",
    "onnx-ir",
    "onnxruntime",
)


def check_convert_extras() -> None:
    """A one-line UserError naming what is missing and how to install it."""
    missing = []
    for name in REQUIRED:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        raise UserError(f"converting to ONNX needs {', '.join(missing)}: {CONVERT_EXTRA_HINT}")


def convert_to(
    target: str,
    name: str,
    precision: str,
    *,
    force: bool = False,
    threads: int | None = None,
    graph: str | None = None,
    lm_head: str | None = None,
    say: Say = print,
) -> Path:
    """`models convert NAME --to TARGET`: the folder converted (or found converted).
    `graph` and `lm_head` shape the ONNX graph only."""
    if target == openvino_convert.TARGET:
        given = [flag for flag, value in (("--graph", graph), ("--lm-head", lm_head)) if value]
        if given:
            raise UserError(f"{' and '.join(given)}: only for --to {RUNTIME}")
        done = openvino_convert.convert(name, precision, force=force, threads=threads, say=say)
        return done.folder
    if target != RUNTIME:
        targets = (RUNTIME, openvino_convert.TARGET)
        raise UserError(
            f"--to: {target!r} is not a supported target (supported: {', '.join(targets)})"
        )
    model = convert(
        name,
        precision,
        force=force,
        threads=threads,
        graph=graph,
        lm_head=lm_head or "float32",
        say=say,
    )
    return model.folder


def convert(
    name: str,
    precision: str,
    *,
    force: bool = False,
    threads: int | None = None,
    graph: str | None = None,
    lm_head: str = "float32",
    say: Say = print,
) -> OnnxModel:
    """Convert registry model `name` to ONNX at `precision` into the model cache, as a
    `graph` graph (one of GRAPHS; None: `default_graph` of the model's architecture),
    the int4 gqa graph's output layer at `lm_head` (one of LM_HEADS)."""
    if precision not in PRECISIONS:
        raise UserError(f"--precision: {precision!r} is not one of: {', '.join(PRECISIONS)}")
    if graph is not None and graph not in GRAPHS:
        raise UserError(f"--graph: {graph!r} is not one of: {', '.join(GRAPHS)}")
    if lm_head not in LM_HEADS:
        raise UserError(f"--lm-head: {lm_head!r} is not one of: {', '.join(LM_HEADS)}")
    if lm_head == "int4" and (precision != "int4" or graph == "optimum"):
        raise UserError("--lm-head int4 needs --precision int4 and the gqa graph")
    target = variant_dir(name, precision)
    label = variant_name(name, precision)
    if not force and onnx_state(name, precision) == "yes":
        done = read_provenance(target)
        wanted = graph or default_graph((done.provenance.get("source") or {}).get("architecture"))
        if _same_conversion(done, precision, wanted, lm_head):
            say(already_converted(label, target))
            return done
        say(f"{label}: converted otherwise ({_describe(done)}); converting again")
    check_convert_extras()
    source = resolve_model(name)
    require_registry(name, source)
    header = read_gguf(source.path)
    graph = graph or default_graph(header.architecture)
    if lm_head == "int4" and graph != "gqa":
        raise UserError("--lm-head int4 needs --precision int4 and the gqa graph")
    if graph == "gqa" and header.architecture != "llama":
        raise UserError(
            f"{name!r}: the gqa graph is written for the llama architecture, not "
            f"{header.architecture!r}: convert with --graph optimum"
        )
    # int4 starts from a converted fp32 export of the same GGUF when there is one.
    fp32 = variant_dir(name, "fp32")
    reuse = (
        precision == "int4"
        and not force
        and onnx_state(name, "fp32") == "yes"
        and read_provenance(fp32).provenance["source"]["sha256"] == source.sha256
        and read_provenance(fp32).graph_kind == graph
    )
    steps: dict[str, float] = {}
    with private_workdir(target, threads, _QUIET) as tmp:
        hf_dir, out_dir = tmp / "hf", tmp / "out"
        export_dir = out_dir if precision == "fp32" else tmp / "fp32"
        if reuse:
            say(f"{label}: starting from the converted {variant_name(name, 'fp32')}")
            export_dir = fp32
        else:
            reading = f"{label}: reading {source.path.name}"
            with timed_step(steps, "gguf_to_transformers", say, reading):
                gguf_to_transformers(source.path, hf_dir)
            if graph == "gqa":
                with timed_step(steps, "gqa_graph", say, f"{label}: writing the ONNX graph (gqa)"):
                    _write_gqa(hf_dir, export_dir)
            else:
                exporting = f"{label}: exporting to ONNX with KV cache"
                with timed_step(steps, "onnx_export", say, exporting):
                    _export(hf_dir, export_dir)
        if precision == "int4":
            with timed_step(steps, "quantize_int4", say, f"{label}: 4-bit weights (MatMulNBits)"):
                _quantize_int4(export_dir, out_dir, lm_head)
        external = check_model_file(out_dir / GRAPH, out_dir)
        provenance = _provenance(
            label, precision, source, header, out_dir, external, steps, graph, lm_head
        )
        if reuse:
            provenance["export"]["from"] = variant_name(name, "fp32")
        publish(out_dir, target, PROVENANCE, provenance)
    model = read_provenance(target)
    say(converted_line(label, model.size_bytes, steps, target))
    return model


def _export(hf_dir: Path, out_dir: Path) -> None:
    from optimum.exporters.onnx import main_export

    try:
        main_export(
            str(hf_dir),
            str(out_dir),
            task="text-generation-with-past",
            local_files_only=True,
            do_validation=False,  # edgebench's own test compares greedy token ids instead
        )
    except Exception as exc:  # the exporter raises many types; the first line says why
        raise UserError(f"optimum could not export {hf_dir.name}: {first_line(exc)}") from None


def quantization(precision: str, lm_head: str) -> dict[str, Any] | None:
    """What the int4 step quantized: the weights of every MatMul, the output layer's at
    `lm_head` (float32 on optimum's graph, which the quantizer cannot take: 49,152 x 576
    floats, 113 MB read per token for SmolLM2)."""
    if precision != "int4":
        return None
    return {**INT4, "lm_head": lm_head}


def _same_conversion(done: OnnxModel, precision: str, graph: str, lm_head: str) -> bool:
    quant = done.provenance.get("quantization") or {}
    return done.graph_kind == graph and (
        precision != "int4" or quant.get("lm_head", "float32") == lm_head
    )


def _describe(done: OnnxModel) -> str:
    quant = done.provenance.get("quantization") or {}
    head = f", lm_head {quant.get('lm_head', 'float32')}" if quant else ""
    return f"{done.graph_kind} graph{head}"


def _write_gqa(hf_dir: Path, out_dir: Path) -> None:
    """The gqa graph from the transformers folder's weights, beside its tokenizer and
    config files (what optimum's export copies too)."""
    import json

    from safetensors.numpy import load_file

    from edgebench.models.onnx_graph import build_llama

    config = json.loads((hf_dir / "config.json").read_text(encoding="utf-8"))
    weights: dict[str, Any] = {}
    for part in sorted(hf_dir.glob("*.safetensors")):
        weights.update(load_file(str(part)))
    try:
        model = build_llama(weights, config)
    except (KeyError, ValueError) as exc:
        raise UserError(
            f"cannot write the gqa graph: {first_line(exc)}: try --graph optimum"
        ) from None
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        (out_dir / GRAPH).write_bytes(model.SerializeToString())
    except OSError as exc:
        raise WriteFailed(out_dir / GRAPH, exc) from None
    _copy_side_files(hf_dir, out_dir, skip=lambda item: item.suffix == ".safetensors")


def _copy_side_files(src: Path, out_dir: Path, skip: Callable[[Path], bool]) -> None:
    """Tokenizer and config files from `src` (the graph, provenance and chat template are
    written by the conversion itself)."""
    for item in src.iterdir():
        own = item.name.startswith(GRAPH) or item.name in (PROVENANCE, CHAT_TEMPLATE)
        if item.is_file() and not own and not skip(item):
            copy_into(item, out_dir)


def _quantize_int4(fp32_dir: Path, out_dir: Path, lm_head: str) -> None:
    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quantizer = MatMulNBitsQuantizer(
        onnx.load(str(fp32_dir / GRAPH)),
        bits=INT4["bits"],
        block_size=INT4["block_size"],
        is_symmetric=INT4["symmetric"],
        # The gqa graph's output layer is the node named "logits" (models/onnx_graph.py).
        nodes_to_exclude=["logits"] if lm_head == "float32" else [],
    )
    quantizer.process()
    out_dir.mkdir(parents=True, exist_ok=True)
    # 4-bit weights stay well under protobuf's 2 GB limit: one file, no side data.
    quantizer.model.save_model_to_file(str(out_dir / GRAPH), use_external_data_format=False)
    _copy_side_files(fp32_dir, out_dir, skip=lambda item: False)


def _provenance(
    label: str,
    precision: str,
    source: Any,
    header: GGUFFile,
    out_dir: Path,
    external: list[Any],
    steps: dict[str, float],
    graph: str,
    lm_head: str,
) -> dict[str, Any]:
    write_chat_template(out_dir / CHAT_TEMPLATE, header)
    if not (out_dir / TOKENIZER).is_file():
        raise UserError(f"{label}: the export wrote no {TOKENIZER}")
    external_files = sorted({e.location for e in external})
    size = sum((out_dir / f).stat().st_size for f in [GRAPH, *external_files])
    kv_f16 = kv_cache_bytes_per_token(header.metadata)
    return {
        "format": FORMAT,
        "name": label,
        "base_model": source.label,
        "runtime": "onnxruntime",
        "precision": precision,
        "created_at": utc_now(),
        "source": gguf_source(source, header),
        "weights": {
            "file": GRAPH,
            "sha256": sha256_file(out_dir / GRAPH),
            "size_bytes": size,
            "external_data": external_files,
        },
        "quantization": quantization(precision, lm_head),
        "context_length": header.context_length,
        # The runtime keeps K and V in float32 (twice llama.cpp's f16 cache): for the
        # memory pre-check.
        "kv_cache": {"dtype": "float32", "bytes_per_token": kv_f16 * 2 if kv_f16 else None},
        "prompt": gguf_prompt(source, header),
        "tokens": gguf_tokens(header),
        "export": {
            "task": "text-generation-with-past",
            "graph": graph,
            "dtype": "float32",
            "steps_s": steps,
        },
        "tools": package_versions(TOOLS),
    }
