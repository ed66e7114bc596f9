"""`edgebench compare`: one table of constraint modes across one or more run folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from edgebench.cli.app import app
from edgebench.report.compare import compare_rows, compare_table, load_run_summary


@app.command()
def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run folders written by `edgebench run`.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows as JSON instead of a table.")
    ] = False,
) -> None:
    """Put constraint modes side by side: accuracy, TTFT, decode tok/s and its ratio to
    `none`, grammar compile times.

    Example: edgebench compare runs/20261122T101500-smollm2-135m-instruct-edgejson
    """
    summaries = [load_run_summary(path) for path in run_dirs]
    if as_json:
        typer.echo(json.dumps(compare_rows(summaries), indent=2))
        return
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    console.print(compare_table(summaries))
