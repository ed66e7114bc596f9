"""edgebench: structured-JSON accuracy and on-device cost of small language models.

Run as `python -m edgebench`, this package is imported before edgebench/__main__.py
runs, and Python then still has to find and read that file: the Ctrl-C guard of a
loading command (see __main__.py) goes in here already, with nothing but modules the
interpreter has loaded at start-up. Imported any other way it does nothing.
"""

import _signal
import os as _os
import sys as _sys

__version__ = "0.2.0"

INTERRUPTED_EARLY = b"interrupted: before the command started; nothing was done\n"


def _interrupted_while_loading(signum, frame):  # type: ignore[no-untyped-def]
    _os.write(2, INTERRUPTED_EARLY)
    _os._exit(130)


def guard_loading() -> bool:
    """Until the handler is put back, Ctrl-C ends the process at once with one line and
    exit code 130 (nothing has been done). False when SIGINT is not Python's own
    (ignored by the caller, or handled by someone else): it is left as it is."""
    handler = _signal.getsignal(_signal.SIGINT)
    if handler is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _interrupted_while_loading)
        return True
    return handler is _interrupted_while_loading


def _run_as_command() -> bool:
    argv = getattr(_sys, "orig_argv", [])
    return any(a == "-m" and argv[i + 1 : i + 2] == ["edgebench"] for i, a in enumerate(argv))


if _run_as_command():
    guard_loading()
