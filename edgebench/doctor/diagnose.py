"""`edgebench doctor`: what this device is, which of its CPU features the installed
llama.cpp build uses, and how fast the default model decodes on it right now.

The device facts are the manifest's device block (system/device.py) with the build's
features (system/build_features.py). The build is asked in a throwaway process (a build
that cannot run on this CPU dies there, not here); the speed probe is a short `tg` run
in a model worker, the same measurement as `edgebench bench`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from edgebench.backends.base import now
from edgebench.backends.llama_cpp import installed_build
from edgebench.backends.speed_test import GENERATION, SpeedPlan, SpeedResult, SpeedTest
from edgebench.bench.execute import SpeedWorker, bench_context, pin_environment
from edgebench.doctor.runtime_facts import RuntimeFacts, runtime_facts
from edgebench.environ import temporary_environ
from edgebench.errors import UserError
from edgebench.failures import (
    WORKER_FAILURES,
    OutOfMemory,
    WorkerDied,
    WorkerTimeout,
    worker_failure,
)
from edgebench.isolation import call_isolated
from edgebench.models.registry import DEFAULT_MODEL, load_registry
from edgebench.models.resolve import resolve_model
from edgebench.runner.prepare import model_under_test
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import start_worker
from edgebench.system.build_features import build_facts
from edgebench.system.build_fit import check_build_fits
from edgebench.system.device import device_info
from edgebench.system.records import Device
from edgebench.system.tree import ROOT

PROBE_SECONDS = 10.0  # the probe's wall time, loading included
PROBE_TEST = SpeedTest(GENERATION, 64)
_MIN_REPETITIONS = 3  # a slow device still gets a spread
_MAX_REPETITIONS = 200
_BUILD_TIMEOUT = 60.0
_BUILD_MEMORY = 2 * 1024**3

ProbeStatus = Literal["measured", "skipped", "unavailable", "failed"]


@dataclass
class Probe:
    """The speed probe: `row` is a bench row (`SpeedResult.to_dict()`) when measured;
    otherwise `message` says why there is none and what to do."""

    status: ProbeStatus
    message: str | None = None
    model: str | None = None
    threads: int | None = None
    load_s: float | None = None
    row: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "model": self.model,
            "threads": self.threads,
            "load_s": self.load_s,
            "result": self.row,
        }


@dataclass
class DoctorReport:
    device: Device
    build_error: str | None  # why the llama.cpp build could not be asked
    probe: Probe
    runtimes: list[RuntimeFacts] = field(default_factory=list)  # the optional runtimes

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device.to_json(),
            "build_error": self.build_error,
            "runtimes": [facts.to_dict() for facts in self.runtimes],
            "probe": self.probe.to_dict(),
        }


def llama_build(
    ask: Callable[[], dict[str, Any]] = installed_build,
) -> tuple[dict[str, Any] | None, str | None]:
    """(the installed llama.cpp's build info, None) or (None, why it could not be read)."""
    try:
        return call_isolated(ask, (), timeout=_BUILD_TIMEOUT, memory_bytes=_BUILD_MEMORY), None
    except UserError as exc:  # not installed
        return None, str(exc)
    except WorkerDied as exc:
        return None, worker_failure(exc, "", who="loading llama.cpp").line
    except (WorkerTimeout, OutOfMemory) as exc:
        return None, f"loading llama.cpp failed: {exc}"


def speed_probe(
    spec: str | None,
    threads: int,
    *,
    seconds: float = PROBE_SECONDS,
    make_worker: Callable[[ModelUnderTest, int], SpeedWorker] | None = None,
    announce: Callable[[str], None] | None = None,
) -> Probe:
    """tg64 of `spec` (None: the default model) repeated for about `seconds`, in a
    worker. A model not in the cache is not pulled: the probe says how to pull it."""
    name = DEFAULT_MODEL if spec is None else spec.strip()
    if name in load_registry():  # a registry model may not be pulled yet: said, not pulled
        try:
            resolve_model(name, pull_missing=False)
        except UserError as exc:
            return Probe("unavailable", f"no speed probe: {exc}", model=name, threads=threads)
    model = model_under_test(spec)  # any other spec: its errors are the user's to fix
    n_ctx = bench_context((PROBE_TEST,), None, model.n_ctx_train)
    if announce is not None:
        announce(f"speed probe: {PROBE_TEST.name} of {model.label}, about {seconds:g} s")
    started = now()
    with temporary_environ(pin_environment(True)):  # as `bench` pins its threads
        worker = (make_worker or _start)(model, threads)
    probe = Probe("measured", model=model.label, threads=threads)
    try:
        _, probe.load_s = worker.load(n_ctx)
        result = _repeat(worker, started + seconds)
    except WORKER_FAILURES as exc:
        probe.status, probe.message = "failed", _failure(exc)
        return probe
    finally:
        worker.close()
    probe.row = result.to_dict()
    return probe


def _start(model: ModelUnderTest, threads: int) -> SpeedWorker:
    return start_worker(model, "none", threads=threads, guard=False)


def _repeat(worker: SpeedWorker, deadline: float) -> SpeedResult:
    """One warm-up, then timed repetitions until the deadline (at least a few)."""
    worker.speed_test(SpeedPlan((PROBE_TEST,), repetitions=0, warmup=1))
    result = SpeedResult(PROBE_TEST)
    while len(result.seconds) < _MIN_REPETITIONS or (
        now() < deadline and len(result.seconds) < _MAX_REPETITIONS
    ):
        (measured,) = worker.speed_test(SpeedPlan((PROBE_TEST,), repetitions=1, warmup=0))
        result.extend(measured)
    return result


def _failure(exc: BaseException) -> str:
    if isinstance(exc, WorkerDied):
        return worker_failure(exc, "during the speed probe").line
    return f"the speed probe failed: {exc}"


def diagnose(
    threads: int,
    *,
    model: str | None = None,
    probe: bool = True,
    root: Path = ROOT,
    build: tuple[dict[str, Any] | None, str | None] | None = None,
    make_worker: Callable[[ModelUnderTest, int], SpeedWorker] | None = None,
    seconds: float = PROBE_SECONDS,
    announce: Callable[[str], None] | None = None,
) -> DoctorReport:
    """Everything `edgebench doctor` prints (`build`: given by tests, else asked)."""
    if build is None and root == ROOT:  # a build for another CPU: one line, before it loads
        check_build_fits()
    device = device_info(threads, root=root)
    runtime, build_error = build if build is not None else llama_build()
    device = replace(device, runtime=runtime, **build_facts(device.cpu_flags, runtime))
    if probe:
        measured = speed_probe(
            model, threads, seconds=seconds, make_worker=make_worker, announce=announce
        )
    else:
        measured = Probe("skipped", "speed probe skipped (--no-probe)", model=model)
    return DoctorReport(
        device=device, build_error=build_error, probe=measured, runtimes=runtime_facts()
    )
