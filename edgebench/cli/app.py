"""The `edgebench` command: a thin layer that parses options and calls the library."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from edgebench.errors import UserError

app = typer.Typer(
    name="edgebench",
    help="Benchmark small language models on structured JSON extraction, on this device.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

err_console = Console(stderr=True)


def stdout_console() -> Console:
    """Where results go: the terminal, or 160 columns when piped (no width to wrap at)."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def _register_commands() -> None:
    # Each command group lives in its own module; importing registers it on `app`.
    from edgebench.cli import (  # noqa: F401
        bench_cmd,
        card_cmd,
        compare_cmd,
        consistency_cmd,
        data_cmd,
        models_cmd,
        run_cmd,
        score_cmd,
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point: user mistakes become one red line and exit code 2, never a traceback.

    Click handles its own usage errors (exit 2) and Ctrl-C in standalone mode; our
    `UserError` passes through it and is printed here."""
    _register_commands()
    try:
        app(args=argv)
    except UserError as exc:
        # The message is text, not markup: "pip install 'edgebench[convert]'" keeps its brackets.
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        sys.exit(exc.exit_code)
