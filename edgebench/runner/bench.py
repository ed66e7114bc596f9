"""`edgebench bench`: prompt-processing and generation speed per thread count, as JSON.

Each thread count gets its own worker process (so its peak RSS is its own), loads the
model once, warms every test up, then runs the timed repetitions round-robin over the
tests (repetition 1 of every test, then repetition 2, ...): a slow drift of the
machine then spreads over all rows instead of biasing the last one. The JSON file is
rewritten after every thread count, so a crash keeps what was measured.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from edgebench.backends import backend_for
from edgebench.backends.base import LoadInfo, now
from edgebench.errors import UserError
from edgebench.io import write_json_atomic
from edgebench.runner import manifest as mf
from edgebench.runner.device import ROOT, current_thermal_state
from edgebench.runner.memory import MemoryPeak
from edgebench.runner.run import ModelUnderTest, status_of
from edgebench.runner.speed import GENERATION, PROMPT, SpeedPlan, SpeedResult, SpeedTest
from edgebench.runner.worker import BackendWorker, WorkerDied, WorkerError

# A row whose repetitions spread more than this (std / mean), or during which other
# processes took more than this share of the CPU, is flagged as not clean.
NOISY_CV = 0.05
BUSY_SHARE = 0.05


class SpeedWorker(Protocol):
    def load(self, n_ctx: int) -> tuple[LoadInfo, float]: ...
    def speed_test(self, plan: SpeedPlan) -> list[SpeedResult]: ...
    def close(self) -> MemoryPeak: ...


@dataclass(frozen=True)
class BenchSettings:
    model: str | None = None
    threads: tuple[int, ...] = (2,)
    prompt_tokens: tuple[int, ...] = (512,)
    gen_tokens: tuple[int, ...] = (128,)
    depths: tuple[int, ...] = (0,)
    repetitions: int = 5
    warmup: int = 1
    n_ctx: int | None = None  # None: the largest test's depth + tokens
    seed: int = 42
    out: Path | None = None


class BenchProgress(Protocol):
    def start(self, total: int, description: str) -> None: ...
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
    slug = "".join(c if c.isalnum() or c in "._-" else "-" for c in model_label)[:60]
    return Path("runs") / f"{stamp}-{slug}-bench.json"


def _model_block(model: ModelUnderTest) -> dict[str, Any]:
    return {
        "label": model.label,
        "path": str(model.path),
        "sha256": model.sha256,
        "size_bytes": model.size_bytes,
        "backend": model.backend,
        **model.details,
    }


def execute_bench(
    settings: BenchSettings,
    model: ModelUnderTest,
    *,
    worker_factory: Callable[[int], SpeedWorker] | None = None,
    progress: BenchProgress | None = None,
    root: Path = ROOT,
) -> BenchResult:
    """Measure every test at every thread count; write and return the JSON report."""
    tests = plan_tests(settings)
    n_ctx = bench_context(tests, settings.n_ctx, model.n_ctx_train)
    started = mf.utc_now()
    path = settings.out or default_path(model.label, started)
    if path.exists():
        raise UserError(f"{path} already exists; choose another --out")

    def make_worker(threads: int) -> SpeedWorker:
        if worker_factory is not None:
            return worker_factory(threads)
        backend, options = backend_for(model.backend, "none")
        return BackendWorker(
            backend, {"model_path": str(model.path), "n_threads": threads, **options}
        )

    device = mf.device_info(settings.threads[0], root=root)
    device["threads_used"] = list(settings.threads)
    report: dict[str, Any] = {
        "kind": "edgebench-bench",
        "format": 1,
        "status": "running",
        "started_at": started,
        "command": sys.argv,
        "settings": {
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()},
            "n_ctx": n_ctx,
            "tests": [t.name for t in tests],
            "order": "warm-up per test, then repetitions round-robin over the tests",
        },
        "model": _model_block(model),
        "device": device,
        "packages": mf.package_versions(),
        "git": mf.git_commit(),
        "workers": [],
        "results": [],
    }
    write_json_atomic(path, report)
    failure: BaseException | None = None
    for threads in settings.threads:
        record: dict[str, Any] = {"threads": threads, "status": "running"}
        report["workers"].append(record)
        t_worker = now()
        worker = make_worker(threads)
        memory = None
        try:
            results = _measure(worker, threads, tests, settings, n_ctx, record, progress)
        except (WorkerError, WorkerDied, UserError, KeyboardInterrupt) as exc:
            failure = exc
            results = []
        finally:
            if progress:
                progress.stop()
            memory = worker.close()
        if report["device"]["runtime"] is None:
            report["device"]["runtime"] = mf.runtime_build(record.get("runtime"))
        record["memory"] = memory.to_dict()
        record["wall_s"] = now() - t_worker
        record["thermal_after"] = current_thermal_state(root)
        record["status"] = status_of(failure)
        for result in results:
            report["results"].append(
                {"threads": threads, **result.to_dict(), "peak_rss_mb": memory.peak_rss_mb}
            )
        write_json_atomic(path, report)
        if failure is not None:
            break
    report["status"] = status_of(failure)
    report["finished_at"] = mf.utc_now()
    if failure is not None:
        report["error"] = str(failure) or type(failure).__name__
    write_json_atomic(path, report)
    if failure is not None:
        if isinstance(failure, KeyboardInterrupt):
            raise failure
        if isinstance(failure, WorkerError) and failure.remote_type == "UserError":
            raise UserError(f"{failure}; report kept in {path}") from None
        raise UserError(f"{failure}; what was measured is kept in {path}") from None
    return BenchResult(path=path, report=report)


def _measure(
    worker: SpeedWorker,
    threads: int,
    tests: tuple[SpeedTest, ...],
    settings: BenchSettings,
    n_ctx: int,
    record: dict[str, Any],
    progress: BenchProgress | None,
) -> list[SpeedResult]:
    load_info, load_s = worker.load(n_ctx)
    record.update(n_ctx=load_info.n_ctx, load_s=load_s, runtime=load_info.runtime)
    if progress:
        progress.start(len(tests) * (settings.warmup + settings.repetitions), f"threads {threads}")
    results = {test: SpeedResult(test) for test in tests}

    def run(test: SpeedTest, repetitions: int, warmup: int, label: str) -> None:
        plan = SpeedPlan((test,), repetitions=repetitions, warmup=warmup, seed=settings.seed)
        (measured,) = worker.speed_test(plan)
        results[test].extend(measured)
        if progress:
            for _ in range(max(repetitions, warmup)):
                progress.advance(label)

    for test in tests:
        if settings.warmup:
            run(test, 0, settings.warmup, f"{test.name} warm-up")
    for rep in range(settings.repetitions):
        for test in tests:
            run(test, 1, 0, f"{test.name} {rep + 1}/{settings.repetitions}")
    return list(results.values())


def flags(row: dict[str, Any]) -> list[str]:
    """Why a row's figure is not clean, in words (empty when it is)."""
    reasons = []
    cv, busy = row.get("tok_s_cv"), row.get("cpu_others_max")
    if cv is not None and cv > NOISY_CV:
        reasons.append(f"spread {100 * cv:.1f}% of the mean")
    if busy is not None and busy > BUSY_SHARE:
        reasons.append(f"other processes took up to {100 * busy:.0f}% of the CPU")
    return reasons
