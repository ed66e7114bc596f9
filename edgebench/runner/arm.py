"""One arm of a run: one model under one constraint mode, decoded in its own worker.

An arm is a loop of per-example steps (`Arm.run_example`) around a worker that can be
replaced. When the worker dies on an example (SIGSEGV, SIGABRT, the OOM killer) or the
example outlives `--timeout`, that example is recorded as `crashed` or `timeout`, a fresh
worker starts (load, compile the arm's constraints again, warm-up) and the loop goes on
with the next example. After `max_crashes` failed examples in a row the arm gives up
(`ArmGaveUp`) and the run moves on to its next arm. A constraint whose compilation kills
or hangs the worker is recorded as unsupported, like one the engine refuses.

The manifest's record of the arm (`record`) is filled in as things happen; a resumed
arm continues the record of the session before (first load, compile timings and
runtime stay; memory peaks, wall time, restarts and failures accumulate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from edgebench.backends.base import (
    FINISH_CRASHED,
    FINISH_ERROR,
    FINISH_TIMEOUT,
    DecodeSettings,
    Generation,
    LoadInfo,
)
from edgebench.constraints import CompileReport, ConstraintRequest, request_for
from edgebench.isolation import WorkerDied, WorkerError, WorkerTimeout, describe_exit
from edgebench.metrics import Family
from edgebench.runner.samples import (
    arm_key,
    build_sample,
    nothing_decoded,
    skipped_generation,
    unsupported_generation,
)
from edgebench.runner.spec import ModelUnderTest, RunSettings
from edgebench.system.memory import MemoryPeak
from edgebench.tasks.base import Example, Task

WARMUP_TOKENS = 8


class Worker(Protocol):
    def count_tokens(self, prompts: list[str]) -> list[int]: ...
    def load(self, n_ctx: int, timeout: float | None = None) -> tuple[LoadInfo, float]: ...
    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport: ...
    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation: ...
    def close(self) -> MemoryPeak: ...


@dataclass(frozen=True)
class ArmSpec:
    """What one arm decodes with. Multi-model runs (`with_model`) add the model to `key`."""

    model: ModelUnderTest
    mode: str
    with_model: bool = False

    @property
    def key(self) -> str:
        """The arm's name in the manifest's `arms` (`samples.arm_key_of` of its samples)."""
        return arm_key(self.model.label, self.mode, self.with_model)

    def describe(self) -> str:
        return f"{self.model.label}, {self.mode}"


@dataclass(frozen=True)
class ExampleJob:
    """One example as every arm decodes it: the rendered prompt and its token budget."""

    index: int  # position among the run's examples
    example: Example
    prompt: str
    max_tokens: int
    skip_reason: str | None = None  # set: does not fit the context, recorded undecoded


class ArmGaveUp(Exception):
    """The arm stopped before its last example. `crashed`: worker deaths or timeouts
    made it stop (else a backend error did)."""

    def __init__(self, message: str, *, crashed: bool) -> None:
        super().__init__(message)
        self.crashed = crashed


@dataclass(frozen=True)
class _Failure:
    finish_reason: str  # crashed, timeout or error
    message: str
    worker_lost: bool  # the worker is dead (or was killed) and must be replaced


def compile_schemas(
    compile_constraint: Callable[[ConstraintRequest], CompileReport],
    requests: list[ConstraintRequest | None],
) -> tuple[dict[str, CompileReport], list[dict[str, Any]]]:
    """Compile each distinct request once (timed), then again to time the cached path.

    Returns the first report per request key and the records for the manifest."""
    reports: dict[str, CompileReport] = {}
    records: list[dict[str, Any]] = []
    for request in requests:
        if request is None or request.key in reports:
            continue
        first = compile_constraint(request)
        again = compile_constraint(request)
        reports[request.key] = first
        records.append({**first.to_dict(), "cached_seconds": again.seconds})
    return reports, records


def merge_peaks(previous: dict[str, Any] | None, peak: MemoryPeak) -> dict[str, Any]:
    """The larger of two memory records, field by field (workers of one arm)."""
    new = peak.to_dict()
    if not previous:
        return new
    merged = dict(previous)
    for key in ("peak_rss_mb", "peak_rss_anon_mb", "peak_rss_file_mb"):
        values = [v for v in (previous.get(key), new.get(key)) if v is not None]
        merged[key] = max(values) if values else None
    merged["samples"] = (previous.get("samples") or 0) + new["samples"]
    if new["source"] != "none":
        merged["source"] = new["source"]
    return merged


class Arm:
    """Runs the examples of one arm; see the module docstring."""

    def __init__(
        self,
        spec: ArmSpec,
        *,
        task: Task,
        settings: RunSettings,
        n_ctx: int,
        stop: tuple[str, ...],
        make_worker: Callable[[], Worker],
        record: dict[str, Any],
        on_sample: Callable[[dict[str, Any]], None],
        note: Callable[[str], None] = lambda message: None,
        worker: Worker | None = None,
        families: Sequence[Family] = (),
    ) -> None:
        self.spec = spec
        self.families = families
        self.task = task
        self.settings = settings
        self.n_ctx = n_ctx
        # Stop strings end free text (a closing code fence); a grammar ends the JSON itself.
        self.stop = stop if spec.mode == "none" else ()
        self.make_worker = make_worker
        self.record = record
        self.on_sample = on_sample
        self.note = note
        self.worker = worker
        self.reports: dict[str, CompileReport] = {}
        self.requests: dict[int, ConstraintRequest | None] = {}
        self.failures_in_a_row = 0
        record.setdefault("worker_failures", [])
        record.setdefault("restarts", 0)

    # -- the loop ------------------------------------------------------------------
    def run(self, jobs: list[ExampleJob]) -> None:
        """Decode every job in order. Raises ArmGaveUp (or the cause of a failed first
        start); the worker is always closed and its memory peak recorded."""
        if not jobs:
            return
        self.requests = {
            job.index: None
            if job.skip_reason is not None
            else request_for(self.spec.mode, job.example.schema, job.example.schema_id)
            for job in jobs
        }
        decoded = [job for job in jobs if job.skip_reason is None]
        try:
            if decoded:  # no worker at all when every job left is a skipped one
                self._start(decoded[0], first_session="compile" not in self.record)
            for position, job in enumerate(jobs):
                sample, failure = self.run_example(job)
                self.on_sample(sample)
                if failure is not None:
                    later = (j for j in jobs[position + 1 :] if j.skip_reason is None)
                    self._after_failure(job, failure, next(later, None))
        finally:
            self._retire_worker()

    def run_example(self, job: ExampleJob) -> tuple[dict[str, Any], _Failure | None]:
        """The per-example step: decode (unless skipped or the constraint is unsupported),
        score, and say whether the worker failed on it."""
        request = self.requests[job.index]
        report = self.reports.get(request.key) if request is not None else None
        failure: _Failure | None = None
        if job.skip_reason is not None:
            gen = skipped_generation(job.skip_reason)
        elif report is not None and not report.ok:
            gen = unsupported_generation(report)
        else:
            gen, failure = self._decode(job, request)
        sample = build_sample(
            job.index,
            job.example,
            job.prompt,
            gen,
            self.task,
            self.spec.mode,
            report,
            job.max_tokens,
            self.families,
        )
        sample["model"] = self.spec.model.label
        return sample, failure

    def _decode(
        self, job: ExampleJob, request: ConstraintRequest | None
    ) -> tuple[Generation, _Failure | None]:
        assert self.worker is not None
        decode = DecodeSettings(max_tokens=job.max_tokens, stop=self.stop, constraint=request)
        where = f"on example '{job.example.id}' ({self.spec.describe()})"
        try:
            gen = self.worker.generate(job.prompt, decode, timeout=self.settings.timeout)
        except WorkerDied as exc:
            message = f"the model worker {describe_exit(exc.exitcode)} {where}"
            failure = _Failure(FINISH_CRASHED, message, worker_lost=True)
        except WorkerTimeout as exc:
            message = f"no answer within --timeout {exc.timeout:g} s {where}; worker killed"
            failure = _Failure(FINISH_TIMEOUT, message, worker_lost=True)
        except WorkerError as exc:
            message = f"the backend failed {where}: {exc.remote_type}: {exc}"
            failure = _Failure(FINISH_ERROR, message, worker_lost=False)
        else:
            self.failures_in_a_row = 0
            return gen, None
        return nothing_decoded(failure.finish_reason, failure.message), failure

    def _after_failure(
        self, job: ExampleJob, failure: _Failure, upcoming: ExampleJob | None
    ) -> None:
        """Record the failure; give up after too many in a row, else replace a lost
        worker (warmed up on the next example, not on the one that failed)."""
        self.failures_in_a_row += 1
        self.record["worker_failures"].append(
            {
                "index": job.index,
                "id": job.example.id,
                "kind": failure.finish_reason,
                "error": failure.message,
            }
        )
        self.note(failure.message)
        if failure.worker_lost:
            self._retire_worker()
        if upcoming is None:
            return
        limit = self.settings.max_crashes
        if self.failures_in_a_row >= limit:
            raise ArmGaveUp(
                f"gave up on {self.spec.describe()} after {self.failures_in_a_row} failed "
                f"examples in a row (--max-crashes {limit}); last: {failure.message}",
                crashed=failure.worker_lost,
            )
        if failure.worker_lost:
            self.record["restarts"] += 1
            try:
                self._start(upcoming, first_session=False)
            except (WorkerDied, WorkerTimeout, WorkerError) as exc:
                raise ArmGaveUp(
                    f"could not restart the model worker for {self.spec.describe()}: {exc}",
                    crashed=not isinstance(exc, WorkerError),
                ) from None

    # -- worker lifecycle ----------------------------------------------------------
    def _start(self, warmup_job: ExampleJob, *, first_session: bool) -> None:
        """A worker ready to decode: loaded, every constraint compiled, warmed up."""
        self._load(first_session)
        self._compile_all(record=first_session)
        if self.settings.warmup:
            self._warmup(warmup_job)

    def _load(self, first_session: bool) -> None:
        if self.worker is None:
            self.worker = self.make_worker()
        load_info, load_s = self.worker.load(self.n_ctx)
        if first_session:
            self.record.update(n_ctx=load_info.n_ctx, load_s=load_s, runtime=load_info.runtime)
        else:
            self.record.setdefault("reload_s", []).append(load_s)

    def _compile_all(self, *, record: bool) -> None:
        """Compile each distinct constraint of the arm in the current worker. With
        `record` (the arm's first session) each is timed twice for the manifest.

        A compile that kills or hangs the worker makes that constraint unsupported; a
        fresh worker is loaded and compiling goes on with the next one."""
        if record:
            self.record["compile"] = []
        distinct = {r.key: r for r in self.requests.values() if r is not None}
        compiled: list[ConstraintRequest] = []  # in the current worker
        for request in distinct.values():
            known = self.reports.get(request.key)
            if known is not None and not known.ok:
                continue  # refused before: nothing will decode under it

            def compile_once(req: ConstraintRequest) -> CompileReport:
                assert self.worker is not None
                return self.worker.compile_constraint(req, timeout=self.settings.timeout)

            try:
                if record:
                    reports, records = compile_schemas(compile_once, [request])
                    report = reports[request.key]
                    self.record["compile"].extend(records)
                else:
                    report = compile_once(request)
            except (WorkerDied, WorkerTimeout) as exc:
                report = self._compile_killed_worker(request, exc)
                if record:
                    self.record["compile"].append({**report.to_dict(), "cached_seconds": None})
                self._retire_worker()
                self._load(first_session=False)
                for done in compiled:  # the fresh worker needs them too (untimed)
                    compile_once(done)
            else:
                compiled.append(request)
            self.reports[request.key] = known or report

    def _compile_killed_worker(
        self, request: ConstraintRequest, exc: WorkerDied | WorkerTimeout
    ) -> CompileReport:
        if isinstance(exc, WorkerDied):
            what = f"the model worker {describe_exit(exc.exitcode)} compiling it"
        else:
            what = f"compiling it took longer than --timeout {exc.timeout:g} s"
        message = f"constraint for schema '{request.label}' ({self.spec.describe()}): {what}"
        self.note(message)
        return CompileReport.new(request, "worker", error=what)

    def _warmup(self, job: ExampleJob) -> None:
        """One short untimed generation so the first measured example pays no first-call
        costs (page faults on the mmapped weights, thread pool start, JIT compilation in
        a grammar engine). If it kills the worker, a fresh one starts without it."""
        assert self.worker is not None
        request = self.requests[job.index]
        usable = request is None or self.reports[request.key].ok
        settings = DecodeSettings(max_tokens=WARMUP_TOKENS, constraint=request if usable else None)
        try:
            self.worker.generate(job.prompt, settings, timeout=self.settings.timeout)
        except WorkerError as exc:
            self.record["warmup_error"] = f"{exc.remote_type}: {exc}"
        except (WorkerDied, WorkerTimeout) as exc:
            if isinstance(exc, WorkerDied):
                message = f"the model worker {describe_exit(exc.exitcode)} during the warm-up"
            else:
                message = f"the warm-up took longer than --timeout {exc.timeout:g} s"
            self.record["warmup_error"] = message
            self.note(f"{message} ({self.spec.describe()}); continuing without it")
            self._retire_worker()
            self._load(first_session=False)
            self._compile_all(record=False)

    def _retire_worker(self) -> None:
        if self.worker is not None:
            worker, self.worker = self.worker, None
            self.record["memory"] = merge_peaks(self.record.get("memory"), worker.close())
