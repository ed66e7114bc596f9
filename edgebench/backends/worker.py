"""A backend served in a worker process (`isolation.ProcessWorker`), and the same
interface around a backend in this process for unit tests.

The parent speaks to both through the same methods: count tokens, load (timed),
compile a constraint, generate, run a speed test, close (returning the memory peak).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from edgebench.backends import create_backend
from edgebench.backends.base import Backend, DecodeSettings, Generation, LoadInfo, now
from edgebench.backends.speed_test import SpeedPlan, SpeedResult, measure_speed
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.isolation import ProcessWorker
from edgebench.system.memory import MemoryPeak, MemorySampler


class BackendService:
    """What a worker process serves: one backend's operations, as the parent calls them."""

    def __init__(self, backend: Backend, clock: Callable[[], float] = now) -> None:
        self.backend = backend
        self.clock = clock  # times speed tests; a fake backend passes its virtual clock

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return self.backend.count_tokens(prompts)

    def load(self, n_ctx: int) -> tuple[LoadInfo, float]:
        """The backend's load and its wall time (timed in the process that loads)."""
        start = now()
        info = self.backend.load(n_ctx)
        return info, now() - start

    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        return self.backend.compile_constraint(request)

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        return self.backend.generate(prompt, settings)

    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]:
        return measure_speed(self.backend, plan, clock=self.clock)  # type: ignore[arg-type]

    def close(self) -> None:
        self.backend.close()


def serve_backend(backend: str, **options: Any) -> BackendService:
    """The worker's factory (it must pickle: a module-level function)."""
    return BackendService(create_backend(backend, **options))


class BackendWorker:
    """A backend in its own process; see `isolation.ProcessWorker` for what happens when
    it dies or hangs (`WorkerDied`, `WorkerTimeout`, `WorkerError`)."""

    def __init__(self, backend: str, options: dict[str, Any]) -> None:
        self.process = ProcessWorker(serve_backend, {"backend": backend, **options})
        self.pid = self.process.pid

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return self.process.call("count_tokens", prompts)

    def load(self, n_ctx: int, timeout: float | None = None) -> tuple[LoadInfo, float]:
        return self.process.call("load", n_ctx, timeout=timeout)

    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport:
        return self.process.call("compile_constraint", request, timeout=timeout)

    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation:
        return self.process.call("generate", prompt, settings, timeout=timeout)

    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]:
        return self.process.call("speed_test", plan)

    def reopen(self, backend: str, options: dict[str, Any]) -> None:
        """Another model file in the same process (`models check` loads many)."""
        self.process.reopen({"backend": backend, **options})

    def close(self) -> MemoryPeak:
        return self.process.close()


class InProcessWorker:
    """The same interface around a backend object in this process (unit tests). There is
    no isolation here: timeouts are ignored and a crash takes the caller with it.

    `clock` times speed tests; a fake backend passes its virtual clock."""

    def __init__(self, backend: Backend, clock: Callable[[], float] = now) -> None:
        self.service = BackendService(backend, clock)
        self.memory = MemorySampler(os.getpid()).start()

    @property
    def backend(self) -> Backend:
        return self.service.backend

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return self.service.count_tokens(prompts)

    def load(self, n_ctx: int, timeout: float | None = None) -> tuple[LoadInfo, float]:
        return self.service.load(n_ctx)

    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport:
        return self.service.compile_constraint(request)

    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation:
        return self.service.generate(prompt, settings)

    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]:
        return self.service.speed_test(plan)

    def close(self) -> MemoryPeak:
        self.service.close()
        self.memory.sample()
        return self.memory.stop()
