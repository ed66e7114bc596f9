"""Starting a worker for (model, constraint mode), and what its failures mean.

Every command that decodes (run, consistency, bench) starts its workers here. A worker
failure on one example is recorded here (`example_failure`: crashed, timeout or error,
in the words of failures.py, and a fresh worker goes on); a run's ending is
failures.run_failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from edgebench.backends import UnsupportedConstraint, backend_for
from edgebench.backends.base import DecodeSettings, Generation, LoadInfo
from edgebench.backends.worker import BackendWorker
from edgebench.constraints import CompileReport, ConstraintRequest, engine_mode
from edgebench.failures import WorkerDied, WorkerError, WorkerTimeout, worker_failure
from edgebench.runfolder.records import FINISH_CRASHED, FINISH_ERROR, FINISH_TIMEOUT, FinishReason
from edgebench.runner.spec import ModelUnderTest
from edgebench.runtimes import engine_of
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


def arm_engine(model: ModelUnderTest, mode: str) -> str | None:
    """The engine that enforces arm mode `mode` on the model's runtime, as the arm's
    record keeps it (None: the runtime cannot decode the mode)."""
    return engine_of(model.backend, engine_mode(mode))


def start_worker(model: ModelUnderTest, mode: str, *, threads: int, guard: bool) -> BackendWorker:
    """A worker process with the backend that decodes `model` under arm mode `mode`."""
    mode = engine_mode(mode)
    backend, options = backend_for(model.backend, mode)
    if mode in SCHEMA_GUARDED_MODES:
        options = {**options, "guard": guard}
    return BackendWorker(backend, {"model_path": str(model.path), "n_threads": threads, **options})


@dataclass(frozen=True)
class ExampleFailure:
    """What a worker failure on one example means for it and for the worker."""

    finish_reason: FinishReason  # crashed, timeout or error
    message: str
    worker_lost: bool  # the worker is dead (or was killed) and must be replaced


# A failure's kind -> the finish reason of the example it cost (a refusal: error).
_FINISH = {"crashed": FINISH_CRASHED, "timeout": FINISH_TIMEOUT}


def example_failure(exc: WorkerDied | WorkerTimeout | WorkerError, where: str) -> ExampleFailure:
    """The record of an example the worker did not answer; `where` names the example."""
    failure = worker_failure(exc, where)
    finish = _FINISH.get(failure.kind, FINISH_ERROR)
    return ExampleFailure(finish, failure.line, failure.worker_lost)
