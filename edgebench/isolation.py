"""Native and untrusted code in a process of its own, so its memory is its own and its
crashes are not ours.

Two shapes:
- `ProcessWorker`: a long-lived child that serves one object's methods over a pipe (a
  model backend: load once, then many requests). The parent keeps every result; a child
  that dies (SIGSEGV in native code, SIGILL from a llama.cpp built for another CPU, the
  OOM killer) becomes `WorkerDied` naming the signal, a request that outlives its timeout
  becomes `WorkerTimeout` (the child is then killed: its answer can no longer be trusted
  to arrive), and an exception raised in the child becomes `WorkerError` (the three are
  defined, classified and described in failures.py). The parent samples the child's
  memory throughout (`system.memory`).
- `call_isolated`: one function call in a throwaway child with a memory cap and a time
  limit (rendering a chat template from a stranger's model file).

Nothing here knows what the served object is: callers pass a picklable factory.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import signal
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

from edgebench.errors import UserError
from edgebench.failures import OutOfMemory, WorkerDied, WorkerError, WorkerTimeout
from edgebench.system.memory import MemoryPeak, MemorySampler

_PR_SET_PDEATHSIG = 1
# Requests a served object may not receive: the loop's own words.
_CONTROL = ("close", "reopen")


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies (kill, OOM), instead of computing on as an
    orphan that holds a core. Elsewhere the worker ends at its next read of the pipe."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _failure(exc: BaseException) -> tuple[str, str, str]:
    return type(exc).__name__, str(exc), traceback.format_exc()


def serve(conn: Connection, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    """Worker main loop: make the served object, then answer requests (method name and
    arguments) until told to close."""
    # Ctrl-C reaches the whole process group; the parent handles it and closes us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    # On an assertion failure ggml would attach gdb to print a backtrace: seconds of
    # delay and a screenful of output for a crash the parent reports in one line.
    os.environ.setdefault("GGML_NO_BACKTRACE", "1")
    served: Any = None
    startup_error = None
    try:
        served = factory(**options)
    except Exception as exc:  # e.g. the runtime is not installed: tell the parent
        startup_error = _failure(exc)
    while True:
        op, args = conn.recv()
        if op in _CONTROL:
            if served is not None:
                served.close()
            served = startup_error = None
            if op == "close":
                conn.send(("ok", None))
                return
            try:  # reopen: the same process, another configuration (another model file)
                served = factory(**args[0])
                conn.send(("ok", None))
            except Exception as exc:
                startup_error = _failure(exc)
                conn.send(("error", startup_error))
            continue
        if served is None:
            conn.send(("error", startup_error))
            continue
        try:
            if op.startswith("_"):
                raise ValueError(f"unknown worker operation {op!r}")
            conn.send(("ok", getattr(served, op)(*args)))
        except Exception as exc:  # report every failure of the served object
            conn.send(("error", _failure(exc)))


class ProcessWorker:
    """The parent's handle on a worker process, with its memory sampled throughout.

    `factory(**options)` builds the served object in the child (both must pickle: the
    child is spawned). Every request takes an optional `timeout` in seconds; past it the
    worker is killed and `WorkerTimeout` raised."""

    def __init__(self, factory: Callable[..., Any], options: dict[str, Any]) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(child_conn, factory, options), daemon=True)
        self.process.start()
        child_conn.close()
        assert self.process.pid is not None
        self.pid: int = self.process.pid
        self.memory = MemorySampler(self.pid).start()
        self._busy = False  # a request is out and its answer not read

    def call(self, op: str, *args: Any, timeout: float | None = None) -> Any:
        try:
            status, payload = self._exchange(op, args, timeout)
        except (EOFError, OSError):  # the pipe broke: the worker is gone
            self.process.join(1)
            raise WorkerDied(self.process.exitcode, op) from None
        except WorkerTimeout:
            self.kill()
            raise
        if status == "error":
            raise WorkerError(*payload)
        return payload

    def _exchange(self, op: str, args: tuple[Any, ...], timeout: float | None) -> Any:
        self._conn.send((op, args))
        self._busy = True
        # Sleep until the answer arrives, the worker exits or the deadline passes: no
        # polling, so this process takes no CPU from the model's threads meanwhile.
        ready = wait([self._conn, self.process.sentinel], timeout)
        if self._conn not in ready:
            if ready:  # only the sentinel: the worker exited without answering
                raise EOFError
            raise WorkerTimeout(op, timeout or 0.0)
        answer = self._conn.recv()
        self._busy = False
        self.memory.sample()  # the worker is idle now: a reading here costs it nothing
        return answer

    def reopen(self, options: dict[str, Any]) -> None:
        """Close the served object and make it again with `options` in the same process
        (`models check` loads many files without starting a process for each)."""
        self.call("reopen", options)

    def kill(self) -> None:
        """End the worker now (SIGKILL), whatever it is doing."""
        self.memory.sample()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)

    def close(self) -> MemoryPeak:
        """Stop the worker and return its memory peak (read just before it exits). A
        worker still busy with a request (Ctrl-C, a timeout) is killed, not waited for."""
        self.memory.sample()
        if self._busy:
            self.kill()
        if self.process.is_alive():
            # A worker that cannot close cleanly is killed below.
            with contextlib.suppress(WorkerDied, WorkerTimeout, OSError, EOFError):
                self.call("close", timeout=10)
        peak = self.memory.stop()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self._conn.close()
        return peak


def call_isolated(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    timeout: float | None,
    memory_bytes: int | None,
) -> Any:
    """`function(*args)` in a throwaway child limited to `memory_bytes` of address space
    and `timeout` seconds (None: no limit). A `UserError` raised there is raised here;
    otherwise the child running out of time is `WorkerTimeout`, out of memory
    `OutOfMemory`, and dying `WorkerDied`, for the caller to word."""
    ctx = mp.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_call_child, args=(sender, function, args, memory_bytes), daemon=True
    )
    process.start()
    sender.close()
    try:
        if not receiver.poll(timeout):
            raise WorkerTimeout("the call", timeout)
        status, payload = receiver.recv()
    except EOFError:
        process.join(5)
        raise WorkerDied(process.exitcode, "the call") from None
    finally:
        if process.is_alive():
            process.kill()
        process.join(5)
        receiver.close()
    if status == "memory":
        raise OutOfMemory(memory_bytes)
    if status != "ok":
        raise UserError(payload)
    return payload


def _call_child(
    conn: Connection,
    function: Callable[..., Any],
    args: tuple[Any, ...],
    memory_bytes: int | None,
) -> None:
    if memory_bytes is not None:
        with contextlib.suppress(ImportError, ValueError, OSError):
            import resource  # POSIX only

            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    try:
        result = function(*args)
    except UserError as exc:
        conn.send(("error", str(exc)))
        return
    except MemoryError:
        conn.send(("memory", None))
        return
    conn.send(("ok", result))
