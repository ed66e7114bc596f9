"""The `edgebench` command: a thin layer that parses options and calls the library.

Every command is registered here, in the order `--help` lists them. Errors end a command
with one line and an exit code by kind (errors.py): a usage mistake 2, a run that could
not finish (a crashed model, a full disk) 1, Ctrl-C 130; never a traceback.
"""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from edgebench import __version__
from edgebench.cli import (
    bench_cmd,
    card_cmd,
    compare_cmd,
    consistency_cmd,
    data_cmd,
    models_cmd,
    run_cmd,
    score_cmd,
)
from edgebench.cli.output import stderr_console
from edgebench.errors import RunFailure, UserError

app = typer.Typer(
    name="edgebench",
    help="Benchmark small language models on structured JSON extraction, on this device.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(run_cmd.run)
app.command()(consistency_cmd.consistency)
app.command()(score_cmd.score)
app.command()(compare_cmd.compare)
app.command()(card_cmd.card)
app.command()(card_cmd.report)
app.command()(bench_cmd.bench)
app.add_typer(models_cmd.models_app, name="models")
app.add_typer(data_cmd.data_app, name="data")


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"edgebench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Benchmark small language models on structured JSON extraction, on this device."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: errors become one red line and an exit code by kind, never a
    traceback. Click handles its own usage errors (exit 2) in standalone mode; our
    errors pass through it and are printed here."""
    try:
        app(args=argv)
    except (UserError, RunFailure) as exc:
        # The message is text, not markup: "pip install 'edgebench[convert]'" keeps its brackets.
        stderr_console().print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(exc.exit_code)
