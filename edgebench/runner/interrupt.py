"""Ctrl-C that cannot be lost.

Python turns SIGINT into a KeyboardInterrupt at whatever bytecode runs next; when that is a
finalizer (`__del__`, a weakref callback), Python prints "Exception ignored" and the run
goes on as if nothing happened. The run installs `StopRequest` for its duration: the signal
is remembered as well as raised, and the runner asks `check()` after every example.
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
        (a caller's own handler is left alone) and this is the main thread."""
        main = threading.current_thread() is threading.main_thread()
        if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            yield self
            return
        previous = signal.signal(signal.SIGINT, self._handle)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)
