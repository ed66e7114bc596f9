"""`edgebench bench`: prompt-processing and generation speed per model and thread count,
as JSON (a `BenchRecord`).

Models are measured one after another. Each (model, thread count) gets its own worker
process (so its peak RSS is its own), loads the model once, warms every test up, then
runs the timed repetitions round-robin over the tests (repetition 1 of every test, then
repetition 2, ...): a slow drift of the machine then spreads over all rows instead of
biasing the last one. The JSON file is rewritten after every group of workers, so a
crash keeps what was measured.

`--duration` repeats the rounds (every row once) until that much wall time has passed
since the first timed repetition of the group of workers, each repetition stamped on the
wall clock, and reports each row's first minute against its last (runner/sustained.py).
`--cooldown` pauses before every timed repetition but the first; `--wait-cool` waits for
the CPU to cool before anything loads (runner/cooling.py). Pauses fall between the
timed intervals, never inside one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from edgebench.backends.base import LoadInfo, now
from edgebench.backends.speed_test import GENERATION, PROMPT, SpeedPlan, SpeedResult, SpeedTest
from edgebench.environ import temporary_environ
from edgebench.errors import RunFailure, UserError
from edgebench.io import write_json_atomic
from edgebench.isolation import WorkerDied, WorkerError
from edgebench.runfolder.records import SCHEMA_VERSION
from edgebench.runner.cooling import Waits, wait_until_cool
from edgebench.runner.engine import status_of
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.sustained import sustained_figures
from edgebench.runner.workers import is_user_error, start_worker
from edgebench.system.build_features import build_facts
from edgebench.system.build_fit import check_build_fits
from edgebench.system.device import ROOT, current_thermal_state, device_info
from edgebench.system.memory import MemoryPeak
from edgebench.system.versions import git_commit, package_versions, runtime_build, utc_now

# OpenMP (llama.cpp's default thread pool) pins its threads to distinct cores with these;
# without them the scheduler sometimes stacks both threads of a 2-thread run on one core.
PIN_ENV = {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
# The bench file's own version (`BenchRecord.format`): 1 held one model, 2 lists `models`.
BENCH_FORMAT = 2


class BenchInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a bench after its report was written."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"interrupted; what was measured is kept in {path}")
        self.path = path


class SpeedWorker(Protocol):
    def load(self, n_ctx: int) -> tuple[LoadInfo, float]: ...
    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]: ...
    def close(self) -> MemoryPeak: ...


@dataclass(frozen=True)
class BenchSettings:
    model: str | None = None  # --model as given (several: comma-joined, as `run` records it)
    threads: tuple[int, ...] = (2,)
    prompt_tokens: tuple[int, ...] = (512,)
    gen_tokens: tuple[int, ...] = (128,)
    depths: tuple[int, ...] = (0,)
    repetitions: int = 5
    warmup: int = 1
    n_ctx: int | None = None  # None: the largest test's depth + tokens
    seed: int = 42
    pin: bool = True  # OpenMP threads pinned to cores (PIN_ENV) unless the user set them
    interleave: bool = True  # all thread counts loaded at once, repetitions alternating
    out: Path | None = None
    # `--duration`: repeat the rounds for this many seconds of wall time (per group of
    # workers) instead of `repetitions`; None: `repetitions` rounds
    duration_s: float | None = None
    cooldown_s: float = 0.0  # `--cooldown`/`--delay`: pause before each timed repetition
    wait_cool: float | None = None  # `--wait-cool`: wait for the CPU below this (°C) first
    wait_cool_timeout: float = 600.0  # `--wait-cool-timeout`: longest wait (s)


class BenchProgress(Protocol):
    def start(self, total: int | None, description: str) -> None: ...
    def advance(self, label: str) -> None: ...
    def stop(self) -> None: ...


@dataclass
class BenchResult:
    path: Path
    report: dict[str, Any]


def plan_tests(settings: BenchSettings) -> tuple[SpeedTest, ...]:
    """pp rows then tg rows, per depth; a token count of 0 asks for no such row."""
    tests = [
        SpeedTest(kind, n, depth)
        for depth in settings.depths
        for kind, counts in ((PROMPT, settings.prompt_tokens), (GENERATION, settings.gen_tokens))
        for n in counts
        if n > 0
    ]
    if not tests:
        raise UserError("nothing to measure: --prompt-tokens and --gen-tokens are all 0")
    return tuple(dict.fromkeys(tests))


def bench_context(tests: tuple[SpeedTest, ...], n_ctx: int | None, n_ctx_train: int | None) -> int:
    """The context every worker loads: big enough for the largest test."""
    largest = max(tests, key=lambda t: t.context_needed)
    needed = largest.context_needed
    if n_ctx is not None and n_ctx < needed:
        raise UserError(f"--n-ctx {n_ctx} is too small for {largest.name} (needs {needed} tokens)")
    n_ctx = n_ctx or needed
    if n_ctx_train and n_ctx > n_ctx_train:
        raise UserError(
            f"{largest.name} needs a context of {n_ctx} tokens, more than the model's "
            f"training context ({n_ctx_train})"
        )
    return n_ctx


def default_path(model_label: str, started: str) -> Path:
    stamp = started.replace(":", "").replace("-", "").replace("+0000", "")[:15]
    slug = "".join(c if c.isalnum() or c in "._+-" else "-" for c in model_label)[:60]
    return Path("runs") / f"{stamp}-{slug}-bench.json"


def pin_environment(pin: bool) -> dict[str, str]:
    """The variables to set in the worker: PIN_ENV where the user has not set them."""
    return {k: v for k, v in PIN_ENV.items() if k not in os.environ} if pin else {}


# Variables that change how OpenMP places and schedules the worker's threads.
_THREAD_VARS = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "OMP_WAIT_POLICY")


def thread_environment(pinning: dict[str, str]) -> dict[str, str]:
    """What the worker sees of `_THREAD_VARS` (the user's values and ours), for the JSON."""
    seen = {k: os.environ.get(k) for k in _THREAD_VARS}
    return {k: v for k, v in {**seen, **pinning}.items() if v is not None}


def execute_bench(
    settings: BenchSettings,
    models: Sequence[ModelUnderTest],
    *,
    worker_factory: Callable[[ModelUnderTest, int], SpeedWorker] | None = None,
    progress: BenchProgress | None = None,
    root: Path = ROOT,
    waits: Waits | None = None,
    notify: Callable[[str], None] | None = None,
    device_name: str | None = None,
) -> BenchResult:
    """Measure every test of every model at every thread count, one model after another;
    write and return the JSON report (a `BenchRecord`). `waits`: the clock, sleep and
    thermometer of durations, pauses and `--wait-cool`; `notify`: where their lines go;
    `device_name`: `--device-name` (None: $EDGEBENCH_DEVICE_NAME, else the hostname)."""
    waits = waits or Waits()
    tests = plan_tests(settings)
    # every model's context is checked before the first one loads
    contexts = [bench_context(tests, settings.n_ctx, model.n_ctx_train) for model in models]
    started = utc_now()
    label = models[0].label + (f"+{len(models) - 1}" if len(models) > 1 else "")
    path = settings.out or default_path(label, started)
    if path.exists():
        raise UserError(f"{path} already exists; choose another --out")

    if worker_factory is None and any(m.backend == "llama" for m in models):
        check_build_fits()  # a build for another CPU: one line, not a SIGILL per test
    pinning = pin_environment(settings.pin)

    def make_worker(model: ModelUnderTest, threads: int) -> SpeedWorker:
        with temporary_environ(pinning):  # the worker process inherits it when it starts
            if worker_factory is not None:
                return worker_factory(model, threads)
            return start_worker(model, "none", threads=threads, guard=False)

    # `threads_used` is the first thread count; settings.threads lists them all
    device = device_info(settings.threads[0], root=root, name=device_name)
    report: dict[str, Any] = {
        "kind": "edgebench-bench",
        "format": BENCH_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "status": "running",
        "started_at": started,
        "command": sys.argv,
        "settings": {
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()},
            "n_ctx": max(contexts),
            "tests": [t.name for t in tests],
            "order": (
                "warm-up per test, then repetitions round-robin over the tests"
                + (" and the thread counts" if settings.interleave else "")
                + (
                    f", repeated for {settings.duration_s:g} s of wall time"
                    if settings.duration_s
                    else ""
                )
                + (
                    f", {settings.cooldown_s:g} s pause before each timed repetition but the first"
                    if settings.cooldown_s
                    else ""
                )
                + "; one model after another"
            ),
            "thread_environment": thread_environment(pinning),
        },
        "models": [_model_block(model) for model in models],
        "device": device,
        "packages": package_versions(),
        "git": git_commit(),
        "workers": [],
        "results": [],
    }
    write_json_atomic(path, report)
    failure: BaseException | None = None
    if settings.wait_cool is not None:
        say = notify or (lambda line: None)
        try:
            waited = wait_until_cool(settings.wait_cool, settings.wait_cool_timeout, waits, say)
            report["wait_cool"] = waited.to_json()
        except KeyboardInterrupt as exc:
            failure = exc
    # Interleaved: every thread count's worker is loaded and the repetitions alternate
    # between them; otherwise one thread count after another (less memory at once).
    groups = [settings.threads] if settings.interleave else [(t,) for t in settings.threads]
    pacer = _Pacer(waits, settings.cooldown_s)
    for model, n_ctx in zip(models, contexts, strict=True):
        if failure is not None:
            break
        for group in groups:
            slots = [_Slot(model, threads) for threads in group]
            report["workers"] += [slot.record for slot in slots]
            try:
                _measure_group(
                    slots, make_worker, tests, settings, n_ctx, progress, len(models), pacer
                )
            except (WorkerError, WorkerDied, UserError, KeyboardInterrupt) as exc:
                failure = exc
            finally:
                if progress:
                    progress.stop()
                for slot in slots:
                    _finish(slot, report, root, sustained=settings.duration_s is not None)
            write_json_atomic(path, report)
            if failure is not None:
                break
        if failure is not None:
            break
    report["status"] = status_of(failure)
    report["finished_at"] = utc_now()
    if failure is not None:
        report["error"] = str(failure) or type(failure).__name__
    write_json_atomic(path, report)
    if failure is not None:
        if isinstance(failure, KeyboardInterrupt):
            raise BenchInterrupted(path) from None
        if is_user_error(failure):
            raise UserError(f"{failure}; report kept in {path}") from None
        raise RunFailure(f"{failure}; what was measured is kept in {path}") from None
    return BenchResult(path=path, report=report)


def _model_block(model: ModelUnderTest) -> dict[str, Any]:
    """The model as a `BenchModel`: the manifest's model record without the prompt
    format (bench sends no prompt) and the run plan."""
    record = model.record().to_json()
    return {k: v for k, v in record.items() if k not in ("prompt_format", "plan")}


@dataclass
class _Slot:
    """One thread count: its worker, its record in the JSON, what it measured."""

    model: ModelUnderTest
    threads: int
    worker: SpeedWorker | None = None
    results: dict[SpeedTest, SpeedResult] = field(default_factory=dict)
    # per test, each timed repetition's (start, end) on the wall clock
    stamps: dict[SpeedTest, list[tuple[float, float]]] = field(default_factory=dict)
    failure: BaseException | None = None
    done: bool = False
    started: float = field(default_factory=now)

    def __post_init__(self) -> None:
        self.record: dict[str, Any] = {
            "threads": self.threads,
            "status": "running",
            "model": self.model.label,
        }

    def run(
        self, test: SpeedTest, repetitions: int, warmup: int, seed: int, clock: Callable[[], float]
    ) -> None:
        assert self.worker is not None
        plan = SpeedPlan((test,), repetitions=repetitions, warmup=warmup, seed=seed)
        start = clock()
        try:
            (measured,) = self.worker.speed_test(plan)
        except BaseException as exc:
            self.failure = exc
            raise
        if repetitions == 1:  # one timed repetition: its own stamps
            self.stamps.setdefault(test, []).append((start, clock()))
        self.results.setdefault(test, SpeedResult(test)).extend(measured)


@dataclass
class _Pacer:
    """`--cooldown`: a pause before every timed repetition of the bench but the first."""

    waits: Waits
    cooldown_s: float
    started: bool = False

    def before_repetition(self) -> None:
        if self.started:
            self.waits.pause(self.cooldown_s)
        self.started = True


def _measure_group(
    slots: list[_Slot],
    make_worker: Callable[[ModelUnderTest, int], SpeedWorker],
    tests: tuple[SpeedTest, ...],
    settings: BenchSettings,
    n_ctx: int,
    progress: BenchProgress | None,
    n_models: int,
    pacer: _Pacer,
) -> None:
    for slot in slots:
        slot.worker = make_worker(slot.model, slot.threads)
        try:
            load_info, load_s = slot.worker.load(n_ctx)
        except BaseException as exc:
            slot.failure = exc
            raise
        slot.record.update(n_ctx=load_info.n_ctx, load_s=load_s, runtime=load_info.runtime)
    clock, duration = pacer.waits.clock, settings.duration_s
    if progress:
        # a duration's count is not known: no total
        steps = (
            None if duration else len(slots) * len(tests) * (settings.warmup + settings.repetitions)
        )
        threads = "threads " + ",".join(str(s.threads) for s in slots)
        # with several models the bar names the one it measures
        progress.start(steps, f"{slots[0].model.label} · {threads}" if n_models > 1 else threads)
    for slot in slots:
        for test in tests:
            if settings.warmup:
                slot.run(test, 0, settings.warmup, settings.seed, clock)
                if progress:
                    for _ in range(settings.warmup):
                        progress.advance(f"t{slot.threads} {test.name} warm-up")
    began = clock()
    rep = 0
    while _another_round(rep, clock() - began, settings):
        for slot in slots:
            for test in tests:
                pacer.before_repetition()
                slot.run(test, 1, 0, settings.seed, clock)
                if progress:
                    of = (
                        f"{rep + 1}/{settings.repetitions}"
                        if duration is None
                        else f"{rep + 1} · {clock() - began:.0f} of {duration:g} s"
                    )
                    progress.advance(f"t{slot.threads} {test.name} {of}")
        rep += 1
    for slot in slots:
        slot.done = True


def _another_round(done: int, elapsed: float, settings: BenchSettings) -> bool:
    """`repetitions` rounds; with `--duration`, rounds (at least one) until it is over."""
    if settings.duration_s is None:
        return done < settings.repetitions
    return done == 0 or elapsed < settings.duration_s


def _finish(slot: _Slot, report: dict[str, Any], root: Path, sustained: bool) -> None:
    """Close the worker and put its record and rows (those with a timed repetition)
    into the report; `sustained` (a `--duration` bench): with their first and last
    minute."""
    memory = slot.worker.close() if slot.worker is not None else None
    record = slot.record
    if report["device"]["runtime"] is None:
        build = runtime_build(record.get("runtime"))
        device = report["device"]
        device.update(runtime=build, **build_facts(device["cpu_flags"], build))
    record["memory"] = memory.to_dict() if memory else None
    record["wall_s"] = now() - slot.started
    record["thermal_after"] = current_thermal_state(root)
    record["status"] = (
        "completed" if slot.done else status_of(slot.failure) if slot.failure else "stopped"
    )
    model = slot.model
    runtime = record.get("runtime") or {}
    # llama-bench's size: llama.cpp's tensor bytes, from the load; else the file's size
    size = runtime.get("model_size_bytes") or model.size_bytes
    for test, result in slot.results.items():
        if result.seconds:
            stamps = slot.stamps.get(test, [])
            t_start, t_end = [a for a, _ in stamps], [b for _, b in stamps]
            report["results"].append(
                {
                    "threads": slot.threads,
                    **result.to_dict(),
                    "t_start": t_start,
                    "t_end": t_end,
                    **(sustained_figures(t_start, t_end, result.tok_s) if sustained else {}),
                    "peak_rss_mb": memory.peak_rss_mb if memory and memory.samples else None,
                    "model": model.label,
                    "quantization": model.details.get("quantization"),
                    "backend": runtime.get("name") or model.backend,
                    "size_bytes": int(size) if size else None,
                    "parameters": model.details.get("parameters"),
                }
            )
