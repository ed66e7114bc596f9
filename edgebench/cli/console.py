"""Where commands print: the consoles, and SIGTERM/SIGHUP stopping a command as Ctrl-C
does. Light on purpose: every command module imports it when `--help` loads them all, so
rich is imported only when something is printed (output.py has the run-and-show part)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# Piped output (a log, a file) has no width to fit: wide enough for any table, so no
# column is cut or wrapped and every number reaches the log.
PIPED_WIDTH = 10_000


def stdout_console() -> Console:
    """Where results go: the terminal at its width; piped, `COLUMNS` when set (rich reads
    it), else `PIPED_WIDTH` (rich would cut names and numbers at 80 columns)."""
    from rich.console import Console

    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return console
    return Console(width=PIPED_WIDTH)


def stderr_console() -> Console:
    """Progress, notes and where the results went."""
    from rich.console import Console

    return Console(stderr=True)


def escape(text: str) -> str:
    """rich's markup escape, rich imported when something is printed."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


# Signals that end a run as Ctrl-C does: `kill` and service managers (SIGTERM), a dropped
# SSH session or closed terminal (SIGHUP, where the platform has it).
_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt while the block runs, as Ctrl-C does."""
    # An ignored signal stays ignored: `nohup edgebench run` must outlive the session.
    stops = [s for s in _STOP_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
    previous = {signum: signal.signal(signum, _raise_interrupt) for signum in stops}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def say(console: Console, markup: str) -> None:
    """The last line of an interrupted run; a terminal gone with SIGHUP cannot take it
    (the run folder has the same facts)."""
    with contextlib.suppress(OSError):
        console.print(markup, highlight=False, soft_wrap=True)
