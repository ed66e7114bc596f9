"""Where commands print, and how a run command ends on Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

import typer
from rich.console import Console

from edgebench.runner.engine import RunInterrupted, RunResult


def stdout_console(width: int = 160) -> Console:
    """Where results go: the terminal, or `width` columns when piped (no terminal width
    to wrap at: rich would cut names and hashes at 80)."""
    console = Console()
    return console if console.is_terminal else Console(width=width)


def stderr_console() -> Console:
    """Progress, notes and where the results went."""
    return Console(stderr=True)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def interruptible(console: Console) -> Iterator[None]:
    """A run that stops cleanly on Ctrl-C and on SIGTERM (sent by `kill` and service
    managers): status `interrupted`, completed examples kept, exit code 130."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    except RunInterrupted as stopped:
        console.print(
            f"[bold yellow]interrupted:[/] {stopped.n_samples} completed examples kept in "
            f"{stopped.run_dir}; continue with: {stopped.resume}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def note_lost(console: Console, result: RunResult, resume: str) -> None:
    """Say which examples a worker crash or timeout cost, and how to run them again."""
    if result.worker_failures:
        console.print(
            f"[yellow]{result.worker_failures} example(s) lost to a worker crash or "
            f"timeout (recorded as such); `{resume}` runs them again[/]",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"run folder: [bold]{result.run_dir}[/]")
