"""Starting a worker for (model, constraint mode), and what its failures mean.

Every command that decodes (run, consistency, bench) starts its workers here, and every
worker failure is translated here: per example (`example_failure`: the example is
recorded as crashed, timeout or error and a fresh worker goes on) or for the run
(`run_failure`: a one-line error naming the run folder).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from edgebench.backends import UnsupportedConstraint, backend_for
from edgebench.backends.base import (
    FINISH_CRASHED,
    FINISH_ERROR,
    FINISH_TIMEOUT,
    DecodeSettings,
    Generation,
    LoadInfo,
)
from edgebench.backends.worker import BackendWorker
from edgebench.constraints import CompileReport, ConstraintRequest, engine_mode
from edgebench.errors import RunFailure, UserError
from edgebench.io import is_disk_full
from edgebench.isolation import WorkerDied, WorkerError, WorkerTimeout, describe_exit
from edgebench.runner.spec import ModelUnderTest
from edgebench.system.memory import MemoryPeak

# Modes where edgebench's keyword guard can enforce what the grammar engine reads past.
SCHEMA_GUARDED_MODES = ("gbnf", "outlines", "mask")


class Worker(Protocol):
    """What the runner asks of a worker (a `BackendWorker`, or an in-process one in tests)."""

    def count_tokens(self, prompts: list[str]) -> list[int]: ...
    def load(self, n_ctx: int, timeout: float | None = None) -> tuple[LoadInfo, float]: ...
    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport: ...
    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation: ...
    def close(self) -> MemoryPeak: ...


# (model, constraint mode) -> a fresh worker; tests pass their own.
WorkerFactory = Callable[[ModelUnderTest, str], Worker]


def skip_reason(model: ModelUnderTest, mode: str) -> str | None:
    """Why the model's runtime cannot decode under `mode`, or None when it can."""
    try:
        backend_for(model.backend, engine_mode(mode))
    except UnsupportedConstraint as exc:
        return str(exc)
    return None


def start_worker(model: ModelUnderTest, mode: str, *, threads: int, guard: bool) -> BackendWorker:
    """A worker process with the backend that decodes `model` under arm mode `mode`."""
    mode = engine_mode(mode)
    backend, options = backend_for(model.backend, mode)
    if mode in SCHEMA_GUARDED_MODES:
        options = {**options, "guard": guard}
    return BackendWorker(backend, {"model_path": str(model.path), "n_threads": threads, **options})


@dataclass(frozen=True)
class Failure:
    """What a worker failure on one example means for it and for the worker."""

    finish_reason: str  # crashed, timeout or error
    message: str
    worker_lost: bool  # the worker is dead (or was killed) and must be replaced


def example_failure(exc: WorkerDied | WorkerTimeout | WorkerError, where: str) -> Failure:
    """The record of an example the worker did not answer; `where` names the example."""
    if isinstance(exc, WorkerDied):
        return Failure(
            FINISH_CRASHED, f"the model worker {describe_exit(exc.exitcode)} {where}", True
        )
    if isinstance(exc, WorkerTimeout):
        message = f"no answer within --timeout {exc.timeout:g} s {where}; worker killed"
        return Failure(FINISH_TIMEOUT, message, True)
    return Failure(FINISH_ERROR, f"the backend failed {where}: {exc.remote_type}: {exc}", False)


def is_user_error(exc: BaseException) -> bool:
    """A `UserError` here, or one raised inside the worker (a refused model file)."""
    return isinstance(exc, UserError) or (
        isinstance(exc, WorkerError) and exc.remote_type in ("UserError", "UnsupportedConstraint")
    )


def run_failure(exc: BaseException, run_dir: Path, kept: int, resume: str) -> Exception:
    """The one-line error a run ends with: the user's mistake stays a `UserError`; a
    crashed, hung or failing model or a full disk is a `RunFailure` naming the folder.
    `resume` is the command that continues the run."""
    if isinstance(exc, OSError):  # io.WriteFailed too, though it is also a UserError
        fix = "free space" if is_disk_full(exc) else "fix it"
        return RunFailure(
            f"could not write to {run_dir}: {exc.strerror or exc}; {kept} completed examples "
            f"are safe in samples.jsonl; {fix}, then continue with `{resume}`"
        )
    if is_user_error(exc):
        return exc if isinstance(exc, UserError) else UserError(str(exc))
    if isinstance(exc, WorkerError):
        what = f"the model worker failed: {exc.remote_type}: {exc}"
    else:
        what = str(exc) or type(exc).__name__
    return RunFailure(f"{what}; {kept} completed examples kept in {run_dir}")
