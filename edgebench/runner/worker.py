"""Run a backend in its own process so its memory is its own and its crashes are not ours.

The parent keeps every result; a worker that dies (SIGSEGV in native code, SIGILL from a
llama.cpp built for another CPU, the OOM killer) becomes a `WorkerDied` error that names
the signal, and a request that outlives its timeout becomes a `WorkerTimeout` (the worker
is then killed: its answer can no longer be trusted to arrive). The parent decides what
to do next (runner/arm.py starts a fresh worker).
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

from edgebench.backends import create_backend
from edgebench.backends.base import Backend, DecodeSettings, Generation, LoadInfo, now
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.runner.memory import MemoryPeak, MemorySampler
from edgebench.runner.speed import SpeedPlan, SpeedResult, measure_speed

_PR_SET_PDEATHSIG = 1


class WorkerDied(Exception):
    """The worker process ended without answering."""

    def __init__(self, exitcode: int | None, during: str) -> None:
        self.exitcode = exitcode
        self.during = during
        super().__init__(f"the model worker {describe_exit(exitcode)} during {during}")


class WorkerTimeout(Exception):
    """The worker did not answer in time (not an OSError, unlike TimeoutError)."""

    def __init__(self, op: str, timeout: float) -> None:
        self.op = op
        self.timeout = timeout
        super().__init__(f"the model worker did not answer {op} within {timeout:g} s")


class WorkerError(Exception):
    """The backend raised inside the worker; `remote_type` names the exception class."""

    def __init__(self, remote_type: str, message: str, remote_traceback: str) -> None:
        self.remote_type = remote_type
        self.remote_traceback = remote_traceback
        super().__init__(message)


def describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "stopped answering"
    if exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
        except ValueError:
            return f"was killed by signal {-exitcode}"
        hint = ""
        if sig == signal.SIGILL:
            hint = " (llama-cpp-python built for another CPU? reinstall with ./install.sh)"
        elif sig == signal.SIGKILL:
            hint = " (out of memory?)"
        return f"was killed by {sig.name} ({signal.strsignal(sig)}){hint}"
    return f"exited with code {exitcode}"


def timed_load(backend: Backend, n_ctx: int) -> tuple[LoadInfo, float]:
    start = now()
    info = backend.load(n_ctx)
    return info, now() - start


def _dispatch(backend: Backend, op: str, args: tuple[Any, ...]) -> Any:
    if op == "count_tokens":
        return backend.count_tokens(*args)
    if op == "load":
        return timed_load(backend, *args)
    if op == "compile_constraint":
        return backend.compile_constraint(*args)
    if op == "generate":
        return backend.generate(*args)
    if op == "speed_test":
        return measure_speed(backend, *args)  # type: ignore[arg-type]
    raise ValueError(f"unknown worker operation {op!r}")


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies (kill, OOM), instead of decoding on as an
    orphan that holds a core. Elsewhere the worker ends at its next read of the pipe."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def serve(conn: Connection, backend_name: str, options: dict[str, Any]) -> None:
    """Worker main loop: answer requests until told to close."""
    # Ctrl-C reaches the whole process group; the parent handles it and closes us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    # On an assertion failure ggml would attach gdb to print a backtrace: seconds of
    # delay and a screenful of output for a crash the parent reports in one line.
    os.environ.setdefault("GGML_NO_BACKTRACE", "1")
    backend: Backend | None = None
    startup_error = None
    try:
        backend = create_backend(backend_name, **options)
    except Exception as exc:  # e.g. the runtime is not installed: tell the parent
        startup_error = (type(exc).__name__, str(exc), traceback.format_exc())
    while True:
        op, args = conn.recv()
        if op == "close":
            if backend is not None:
                backend.close()
            conn.send(("ok", None))
            return
        if op == "reopen":  # the same process, another configuration (another model)
            if backend is not None:
                backend.close()
            backend, startup_error = None, None
            try:
                backend = create_backend(backend_name, **args[0])
                conn.send(("ok", None))
            except Exception as exc:
                startup_error = (type(exc).__name__, str(exc), traceback.format_exc())
                conn.send(("error", startup_error))
            continue
        if backend is None:
            conn.send(("error", startup_error))
            continue
        try:
            conn.send(("ok", _dispatch(backend, op, args)))
        except Exception as exc:  # report every backend failure to the parent
            conn.send(("error", (type(exc).__name__, str(exc), traceback.format_exc())))


class BackendWorker:
    """The parent's handle on a worker process, with its memory sampled throughout.

    Every request takes an optional `timeout` in seconds; past it the worker is killed
    and `WorkerTimeout` raised."""

    def __init__(self, backend_name: str, options: dict[str, Any]) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(
            target=serve, args=(child_conn, backend_name, options), daemon=True
        )
        self.process.start()
        child_conn.close()
        assert self.process.pid is not None
        self.pid: int = self.process.pid
        self.memory = MemorySampler(self.pid).start()
        self._busy = False  # a request is out and its answer not read

    def _call(self, op: str, *args: Any, timeout: float | None = None) -> Any:
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

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return self._call("count_tokens", prompts)

    def load(self, n_ctx: int, timeout: float | None = None) -> tuple[LoadInfo, float]:
        return self._call("load", n_ctx, timeout=timeout)

    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport:
        return self._call("compile_constraint", request, timeout=timeout)

    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation:
        return self._call("generate", prompt, settings, timeout=timeout)

    def reopen(self, options: dict[str, Any]) -> None:
        """Close the backend and create it again with `options` in the same process
        (`models check` loads many files without starting a process for each)."""
        self._call("reopen", options)

    def kill(self) -> None:
        """End the worker now (SIGKILL), whatever it is doing."""
        self.memory.sample()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)

    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]:
        return self._call("speed_test", plan)

    def close(self) -> MemoryPeak:
        """Stop the worker and return its memory peak (read just before it exits). A
        worker still busy with a request (Ctrl-C, a timeout) is killed, not waited for."""
        self.memory.sample()
        if self._busy:
            self.kill()
        if self.process.is_alive():
            # A worker that cannot close cleanly is killed below.
            with contextlib.suppress(WorkerDied, WorkerTimeout, OSError, EOFError):
                self._call("close", timeout=10)
        peak = self.memory.stop()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self._conn.close()
        return peak


class InProcessWorker:
    """The same interface around a backend object in this process (unit tests). There is
    no isolation here: timeouts are ignored and a crash takes the caller with it.

    `clock` times speed tests; a fake backend passes its virtual clock."""

    def __init__(self, backend: Backend, clock: Callable[[], float] = now) -> None:
        self.backend = backend
        self.clock = clock
        self.memory = MemorySampler(os.getpid()).start()

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return self.backend.count_tokens(prompts)

    def load(self, n_ctx: int, timeout: float | None = None) -> tuple[LoadInfo, float]:
        return timed_load(self.backend, n_ctx)

    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport:
        return self.backend.compile_constraint(request)

    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation:
        return self.backend.generate(prompt, settings)

    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]:
        return measure_speed(self.backend, plan, clock=self.clock)  # type: ignore[arg-type]

    def close(self) -> MemoryPeak:
        self.backend.close()
        self.memory.sample()
        return self.memory.stop()
