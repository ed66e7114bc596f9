"""Fakes for `edgebench bench`: the model it measures and in-process speed workers on the
fake backend (one per thread count, prompt processing faster with more threads)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.base import LoadInfo
from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.speed_test import SpeedPlan, SpeedResult
from edgebench.backends.worker import InProcessWorker
from edgebench.bench import execute as bench
from edgebench.isolation import WorkerDied
from edgebench.prompts import STYLE_COMPLETION, PromptFormat
from edgebench.runner.spec import ModelUnderTest
from edgebench.system.memory import MemoryPeak
from tests.helpers.waits import FakeTime


def bench_model(
    n_ctx_train: int | None = 8192, label: str = "fake-model", quantization: str = "Q4_1"
) -> ModelUnderTest:
    return ModelUnderTest(
        label=label,
        path=Path("/models/fake.gguf"),
        sha256="0" * 64,
        size_bytes=98_362_432,
        prompt_format=PromptFormat(style=STYLE_COMPLETION),
        n_ctx_train=n_ctx_train,
        backend="fake",
        details={"parameters": 134_515_008, "quantization": quantization},
    )


def built_for(system_info: str) -> Callable[[ModelUnderTest, int], InProcessWorker]:
    """A bench worker factory whose loads report a llama.cpp build with this system info
    (one token per 10 ms of the backend's virtual clock)."""

    def worker(model: ModelUnderTest, threads: int) -> InProcessWorker:
        backend = FakeBackend(timings=FakeTimings(per_output_token=0.01), system_info=system_info)
        return InProcessWorker(backend, clock=backend.virtual_clock)

    return worker


class SpeedWorkers:
    """A bench worker factory: in-process workers on fake backends, timed by the
    backend's virtual clock (2 ms per prompt token / threads, 10 ms per generated token).

    `made` lists the thread counts asked for, in order (`made_for`: with the model's
    label). The worker for `die_at` threads (of the model labelled `die_model`, any when
    None) fails its first speed test with `failure` (default: killed by SIGSEGV)."""

    def __init__(
        self,
        die_at: int | None = None,
        failure: BaseException | None = None,
        die_model: str | None = None,
    ) -> None:
        self.die_at = die_at
        self.die_model = die_model
        self.failure = failure if failure is not None else WorkerDied(-11, "speed_test")
        self.made: list[int] = []
        self.made_for: list[tuple[str, int]] = []

    def __call__(self, model: ModelUnderTest, threads: int) -> Any:
        self.made.append(threads)
        self.made_for.append((model.label, threads))
        backend = FakeBackend(
            timings=FakeTimings(per_prompt_token=0.002 / threads, per_output_token=0.01)
        )
        worker = InProcessWorker(backend, clock=backend.virtual_clock)
        if threads == self.die_at and self.die_model in (None, model.label):

            def fail(plan: SpeedPlan) -> Any:
                raise self.failure

            worker.speed_test = fail  # type: ignore[method-assign]
        return worker


@dataclass
class TimedWorker:
    """A speed worker whose repetitions take wall time on the fake clock, at the speed
    `speed(t)` gives for the time since the first timed repetition."""

    time: FakeTime
    speed: Callable[[float], float]
    began: float | None = None
    plans: list[SpeedPlan] = field(default_factory=list)

    def load(self, n_ctx: int) -> tuple[LoadInfo, float]:
        return LoadInfo(n_ctx, {"name": "fake"}), 0.1

    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]:
        self.plans.append(plan)
        results = []
        for test in plan.tests:
            result = SpeedResult(test)
            for _ in range(plan.warmup):
                self.time.now += 1.0  # untimed
            for _ in range(plan.repetitions):
                if self.began is None:
                    self.began = self.time.now
                seconds = test.n_tokens / self.speed(self.time.now - self.began)
                self.time.now += seconds
                result.seconds.append(seconds)
                result.cpu_others.append(None)
                result.cpu_steal.append(None)
            results.append(result)
        return results

    def close(self) -> MemoryPeak:
        return MemoryPeak(peak_rss_mb=100.0)


def fake_start_worker(monkeypatch: pytest.MonkeyPatch, workers: Any) -> None:
    """`bench` starts its workers through `start_worker`: `workers(model, threads)`
    (a `SpeedWorkers` or a factory like it) instead."""
    monkeypatch.setattr(
        bench, "start_worker", lambda model, mode, *, threads, guard: workers(model, threads)
    )
