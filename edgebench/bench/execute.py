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
wall clock, and reports each row's first minute against its last (bench/sustained.py).
`--cooldown` pauses before every timed repetition but the first; `--wait-cool` waits for
the CPU to cool before anything loads (runner/cooling.py). Pauses fall between the
timed intervals, never inside one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol

from edgebench.backends.base import LoadInfo, now
from edgebench.backends.speed_test import GENERATION, PROMPT, SpeedPlan, SpeedResult, SpeedTest
from edgebench.bench.sustained import sustained_figures
from edgebench.environ import temporary_environ
from edgebench.errors import RunFailure, UserError
from edgebench.failures import WorkerDied, WorkerError, is_user_error
from edgebench.io import write_json_atomic
from edgebench.runfolder.records import (
    SCHEMA_VERSION,
    BenchModel,
    BenchRecord,
    BenchRow,
    BenchWorker,
    GitCommit,
    MemoryRecord,
    RunStatus,
    WaitCool,
)
from edgebench.runner.cooling import Waits, wait_until_cool
from edgebench.runner.engine import status_of
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import start_worker
from edgebench.runtimes import bench_timing, needs_cpu_build, pp_depth_refusal
from edgebench.system.build_features import build_facts
from edgebench.system.build_fit import check_build_fits
from edgebench.system.device import current_thermal_state, device_info
from edgebench.system.memory import MemoryPeak
from edgebench.system.records import Device
from edgebench.system.tree import ROOT
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
    record: BenchRecord  # the file's record, as it was last written

    @property
    def report(self) -> dict[str, Any]:
        """The JSON written (`bench_json`)."""
        return bench_json(self.record)


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


def check_rows(model: ModelUnderTest, tests: tuple[SpeedTest, ...]) -> None:
    """A row the model's runtime cannot measure (ppN @ dD on OpenVINO GenAI) is the
    user's mistake, said in one line before anything loads."""
    for test in tests:
        refusal = test.kind == PROMPT and test.depth and pp_depth_refusal(model.backend, test.name)
        if refusal:
            raise UserError(f"{model.label}: {refusal}; use --prompt-tokens 0 with --depth")


def _timing_block(models: Sequence[ModelUnderTest]) -> dict[str, Any]:
    """`settings.timing`: how the rows of runtimes not timed by the bench's own clock
    were measured (runtime -> the method), when any model runs on one."""
    timing = bench_timing(m.backend for m in models)
    return {"timing": timing} if timing else {}


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
    # every model's context and rows are checked before the first one loads
    contexts = [bench_context(tests, settings.n_ctx, model.n_ctx_train) for model in models]
    for model in models:
        check_rows(model, tests)
    started = utc_now()
    label = models[0].label + (f"+{len(models) - 1}" if len(models) > 1 else "")
    path = settings.out or default_path(label, started)
    if path.exists():
        raise UserError(f"{path} already exists; choose another --out")

    if worker_factory is None and needs_cpu_build(m.backend for m in models):
        check_build_fits()  # a build for another CPU: one line, not a SIGILL per test
    pinning = pin_environment(settings.pin)

    def make_worker(model: ModelUnderTest, threads: int) -> SpeedWorker:
        with temporary_environ(pinning):  # the worker process inherits it when it starts
            if worker_factory is not None:
                return worker_factory(model, threads)
            return start_worker(model, "none", threads=threads, guard=False)

    # `threads_used` is the first thread count; settings.threads lists them all
    device = device_info(settings.threads[0], root=root, name=device_name)
    head = _Head(
        started_at=started,
        command=list(sys.argv),
        settings=_settings_block(settings, tests, max(contexts), pinning) | _timing_block(models),
        models=[_model_block(model) for model in models],
        packages=package_versions(),
        git=GitCommit.from_json(commit) if (commit := git_commit()) else None,
    )
    measured = _Measured(device)
    write_json_atomic(path, bench_json(head.record(measured, "running")))
    failure: BaseException | None = None
    if settings.wait_cool is not None:
        say = notify or (lambda line: None)
        try:
            measured.wait_cool = wait_until_cool(
                settings.wait_cool, settings.wait_cool_timeout, waits, say
            )
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
                    measured.add(_finish(slot, measured, root, settings.duration_s is not None))
            write_json_atomic(path, bench_json(head.record(measured, "running")))
            if failure is not None:
                break
        if failure is not None:
            break
    error = (str(failure) or type(failure).__name__) if failure is not None else None
    record = head.record(measured, status_of(failure), finished_at=utc_now(), error=error)
    write_json_atomic(path, bench_json(record))
    if failure is not None:
        if isinstance(failure, KeyboardInterrupt):
            raise BenchInterrupted(path) from None
        if is_user_error(failure):
            raise UserError(f"{failure}; report kept in {path}") from None
        raise RunFailure(f"{failure}; what was measured is kept in {path}") from None
    return BenchResult(path=path, record=record)


def _settings_block(
    settings: BenchSettings, tests: tuple[SpeedTest, ...], n_ctx: int, pinning: dict[str, str]
) -> dict[str, Any]:
    """`BenchRecord.settings`: the options, the context loaded, the tests and their order."""
    order = (
        "warm-up per test, then repetitions round-robin over the tests"
        + (" and the thread counts" if settings.interleave else "")
        + (f", repeated for {settings.duration_s:g} s of wall time" if settings.duration_s else "")
        + (
            f", {settings.cooldown_s:g} s pause before each timed repetition but the first"
            if settings.cooldown_s
            else ""
        )
        + "; one model after another"
    )
    return {
        **{k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()},
        "n_ctx": n_ctx,
        "tests": [t.name for t in tests],
        "order": order,
        "thread_environment": thread_environment(pinning),
    }


@dataclass(frozen=True)
class _Head:
    """What every write of the bench's file shares: settled before the first worker."""

    started_at: str
    command: list[str]
    settings: dict[str, Any]
    models: list[BenchModel]
    packages: dict[str, Any]
    git: GitCommit | None

    def record(
        self,
        measured: _Measured,
        status: RunStatus,
        finished_at: str | None = None,
        error: str | None = None,
    ) -> BenchRecord:
        """The file as it stands: what was measured so far, complete when built."""
        return BenchRecord(
            kind="edgebench-bench",
            status=status,
            started_at=self.started_at,
            settings=self.settings,
            device=measured.device,
            format=BENCH_FORMAT,
            schema_version=SCHEMA_VERSION,
            finished_at=finished_at,
            error=error,
            command=self.command,
            models=self.models,
            packages=self.packages,
            git=self.git,
            workers=list(measured.workers),
            results=list(measured.results),
            wait_cool=measured.wait_cool,
        )


@dataclass
class _Measured:
    """What the bench has measured so far: the finished workers and their rows, the
    device (its `runtime` and build once the first worker loaded), the wait to cool."""

    device: Device
    workers: list[BenchWorker] = field(default_factory=list)
    results: list[BenchRow] = field(default_factory=list)
    wait_cool: WaitCool | None = None

    def add(self, finished: tuple[BenchWorker, list[BenchRow], Device]) -> None:
        worker, rows, self.device = finished
        self.workers.append(worker)
        self.results += rows


# Keys bench.json has always left out rather than writing null: an end not yet reached,
# no error, a format-1 file's `model`, no `--wait-cool`.
_LEFT_OUT = ("finished_at", "error", "model", "wait_cool")
# a worker that never loaded has no context, load time or runtime
_WORKER_LEFT_OUT = ("n_ctx", "load_s", "runtime")
# a row has its one-line device only in `--format` views; its first and last minute only
# in a `--duration` bench (`span_s` set)
_SUSTAINED = ("first_minute_tok_s", "last_minute_tok_s", "drop_pct", "span_s", "overlap_s")


def bench_json(record: BenchRecord) -> dict[str, Any]:
    """The file `edgebench bench` writes: the record's JSON, less the keys that have no
    value there (the shape the file has always had; readers take them as null)."""
    data = _without(record.to_json(), _LEFT_OUT)
    data["workers"] = [_without(w, _WORKER_LEFT_OUT) for w in data["workers"]]
    data["results"] = [
        _without(row, ("device", *(_SUSTAINED if row["span_s"] is None else ())))
        for row in data["results"]
    ]
    return data


def _without(data: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys or v is not None}


def _model_block(model: ModelUnderTest) -> BenchModel:
    """The model as a `BenchModel`: the manifest's model record without the prompt
    format (bench sends no prompt) and the run plan."""
    record = model.record()
    return BenchModel(**{f.name: getattr(record, f.name) for f in fields(BenchModel)})


@dataclass
class _Slot:
    """One thread count: its worker, what it loaded and measured."""

    model: ModelUnderTest
    threads: int
    worker: SpeedWorker | None = None
    load: tuple[LoadInfo, float] | None = None  # what the load reported, and its seconds
    results: dict[SpeedTest, SpeedResult] = field(default_factory=dict)
    # per test, each timed repetition's (start, end) on the wall clock
    stamps: dict[SpeedTest, list[tuple[float, float]]] = field(default_factory=dict)
    failure: BaseException | None = None
    done: bool = False
    started: float = field(default_factory=now)

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
            slot.load = slot.worker.load(n_ctx)
        except BaseException as exc:
            slot.failure = exc
            raise
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


def _finish(
    slot: _Slot, measured: _Measured, root: Path, sustained: bool
) -> tuple[BenchWorker, list[BenchRow], Device]:
    """Close the worker: its record, its rows (those with a timed repetition) and the
    device, with the runtime's build once a worker has loaded; `sustained` (a
    `--duration` bench): rows with their first and last minute."""
    peak = slot.worker.close() if slot.worker is not None else None
    memory = MemoryRecord(**peak.to_dict()) if peak else None
    load_info, load_s = slot.load if slot.load is not None else (None, None)
    runtime = load_info.runtime if load_info is not None else None
    device = measured.device
    if device.runtime is None:
        build = runtime_build(runtime)
        device = replace(device, runtime=build, **build_facts(device.cpu_flags, build))
    worker = BenchWorker(
        threads=slot.threads,
        status="completed" if slot.done else status_of(slot.failure) if slot.failure else "stopped",
        model=slot.model.label,
        n_ctx=load_info.n_ctx if load_info is not None else None,
        load_s=load_s,
        runtime=runtime,
        memory=memory,
        wall_s=now() - slot.started,
        thermal_after=current_thermal_state(root),
    )
    model = slot.model
    # llama-bench's size: llama.cpp's tensor bytes, from the load; else the file's size
    size = (runtime or {}).get("model_size_bytes") or model.size_bytes
    rows = []
    for test, result in slot.results.items():
        if result.seconds:
            stamps = slot.stamps.get(test, [])
            t_start, t_end = [a for a, _ in stamps], [b for _, b in stamps]
            rows.append(
                BenchRow(
                    threads=slot.threads,
                    **result.to_dict(),
                    t_start=t_start,
                    t_end=t_end,
                    **(sustained_figures(t_start, t_end, result.tok_s) if sustained else {}),
                    peak_rss_mb=memory.peak_rss_mb if memory and memory.samples else None,
                    model=model.label,
                    quantization=model.details.get("quantization"),
                    backend=(runtime or {}).get("name") or model.backend,
                    size_bytes=int(size) if size else None,
                    parameters=model.details.get("parameters"),
                )
            )
    return worker, rows, device
