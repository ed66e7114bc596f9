"""Ctrl-C that cannot be lost.

Python turns SIGINT into a KeyboardInterrupt at whatever bytecode runs next; when that is a
finalizer (`__del__`, a weakref callback), Python prints "Exception ignored" and the run
goes on as if nothing happened. The run installs `StopRequest` for its duration: the signal
is remembered as well as raised, and the runner asks `check()` after every example.
While the run writes its last files, `deferred()` only remembers the signal (Ctrl-C,
and SIGTERM or SIGHUP where the CLI handles them), so they are written whole and then
marked interrupted.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


class StopRequest:
    """Set by SIGINT while installed; `check()` raises KeyboardInterrupt once it is set."""

    def __init__(self) -> None:
        self.requested = False

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested = True
        raise KeyboardInterrupt

    def check(self) -> None:
        if self.requested:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopRequest]:
        """Handle SIGINT while the block runs, if Python's default handler is in place
        (a caller's own handler is left alone) and this is the main thread; SIGTERM and
        SIGHUP too where the CLI made them stop the command (a Python handler), so they
        are remembered as Ctrl-C is: one that lands in a finalizer is not lost."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {}
        for signum in _STOP_SIGNALS:
            handler = signal.getsignal(signum)
            ours = handler is signal.default_int_handler if signum == signal.SIGINT else None
            if ours or (ours is None and callable(handler)):
                previous[signum] = signal.signal(signum, self._handle)
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[StopRequest]:
        """While the block runs, a stop signal with a Python handler (Ctrl-C; SIGTERM and
        SIGHUP where the CLI turns them into one) is only remembered in `requested`;
        signals ignored or left to the system are left alone. Main thread only."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {}
        for signum in _STOP_SIGNALS:
            handler = signal.getsignal(signum)
            if callable(handler):
                previous[signum] = signal.signal(signum, self._remember)
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _remember(self, signum: int, frame: Any) -> None:
        self.requested = True


_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
