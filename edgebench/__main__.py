"""`python -m edgebench` and the `edgebench` command.

Loading the command's modules (typer, rich, numpy ...) takes most of a second; a Ctrl-C
then would be a KeyboardInterrupt traceback from whichever import it lands in. Until the
command starts, Ctrl-C ends it at once with one line and exit code 130: nothing has been
done yet. This module imports nothing of edgebench before its handler is in place.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

INTERRUPTED_EARLY = b"interrupted: before the command started; nothing was done\n"


def _interrupted_while_loading(signum: int, frame: FrameType | None) -> None:
    os.write(2, INTERRUPTED_EARLY)
    os._exit(130)


def entry() -> None:
    """Load the command line with Ctrl-C guarded, then run it (cli/app.py's `main`
    handles Ctrl-C from there on). A SIGINT ignored by the caller stays ignored."""
    guarded = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if guarded:
        signal.signal(signal.SIGINT, _interrupted_while_loading)
    from edgebench.cli.app import interrupted_line, main

    try:
        if guarded:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        main()
    except KeyboardInterrupt:  # in the instant between the two handlers
        interrupted_line()
        sys.exit(130)


if __name__ == "__main__":
    entry()
