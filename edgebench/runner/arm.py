"""One arm of a run: one model under one constraint mode, decoded in its own worker.

An arm is a loop of per-job steps (`Arm.run_job`) around a worker that can be replaced.
When the worker dies on a job (SIGSEGV, SIGABRT, the OOM killer) or the job outlives
`--timeout`, that job is recorded as `crashed` or `timeout`, a fresh worker starts (load,
compile the arm's constraints again, warm-up) and the loop goes on with the next job.
After `max_crashes` failed jobs in a row the arm gives up (`ArmGaveUp`) and the run moves
on to its next arm. A constraint whose compilation raises in the engine, kills the worker
or outlives `--compile-timeout` is recorded as unsupported (counted as a crash), like one
the engine refuses, and never compiled again in the arm (a resumed arm takes the verdict
from its record): the schema's later examples are unsupported at no cost.

Around each decode the arm reads the machine's CPU times and its own (this process and
the worker, `system/cpu_share.py`) into the sample's `cpu`. With `--retime contended`,
after its jobs the arm decodes each contended example again, up to `--retime-max` times,
until a pass is clean: the sample keeps the first pass's output and scores, takes the
clean pass's timings and keeps the disturbed ones; a pass whose output differs byte for
byte ends it (`retime_mismatch`, timings kept). The re-timed sample is a second line
that supersedes the first (`SampleRecord.passes`), so a run stopped while re-timing
resumes with the examples not yet re-timed.

With `--delay`, the arm pauses before each job it decodes but its first (the pauses are
added up in `ArmRecord.paused_s`, outside every example's timings); Ctrl-C during a pause
ends the arm as it would during a job.

The arm's record (`Arm.record`, an immutable `ArmRecord` replaced as things happen)
continues the record of an earlier session of a resumed run: first load, compile timings
and runtime stay; memory peaks, wall time, restarts and failures accumulate.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from edgebench.backends.answer_end import EndPolicy, LoopRule
from edgebench.backends.base import DecodeSettings, Generation
from edgebench.constraints import (
    CRASHED_SOURCE,
    FREE_MODES,
    CompileReport,
    ConstraintRequest,
    closes,
    engine_mode,
    request_for,
)
from edgebench.failures import (
    WORKER_FAILURES,
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    worker_failure,
)
from edgebench.metrics.base import Family
from edgebench.runfolder.records import (
    ArmRecord,
    CompileRecord,
    CpuUse,
    MemoryRecord,
    RunSettings,
    SampleRecord,
    WallClock,
    WorkerFailure,
)
from edgebench.runner.cooling import Waits
from edgebench.runner.jobs import Job
from edgebench.runner.samples import (
    build_sample,
    compute_timings,
    needs_retime,
    nothing_decoded,
    skipped_generation,
    step_times,
    unsupported_generation,
    wall_clock,
)
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import ExampleFailure, Worker, example_failure
from edgebench.scoring.extract import extraction_for
from edgebench.system.cpu_share import CpuMeter, CpuSnapshot, CpuTimes
from edgebench.system.memory import MemoryPeak
from edgebench.tasks import reference_of

WARMUP_TOKENS = 8


def end_policy(settings: RunSettings, mode: str) -> EndPolicy:
    """What ends or closes the answers of an arm besides the model and the budget:
    stopping at the complete JSON in the free modes, loop detection in every mode,
    closing in the `+close` arms."""
    return EndPolicy(
        stop_at_json=settings.stop_at_json and engine_mode(mode) in FREE_MODES,
        loop=LoopRule() if settings.loop_detection else None,
        close=closes(mode),
        close_tokens=settings.close_tokens,
    )


class ArmGaveUp(Exception):
    """The arm stopped before its last job. `crashed`: worker deaths or timeouts made it
    stop (else a backend error did)."""

    def __init__(self, message: str, *, crashed: bool) -> None:
        super().__init__(message)
        self.crashed = crashed


def compile_record(report: CompileReport, cached_seconds: float | None) -> CompileRecord:
    return CompileRecord(**report.to_dict(), cached_seconds=cached_seconds)


def crashed_verdicts(record: ArmRecord) -> dict[str, CompileReport]:
    """The schemas whose compile crashed in an earlier session of the arm (raised, killed
    the worker, outlived --compile-timeout), by key: a resumed arm does not pay again."""
    return {
        r.key: CompileReport.new(
            ConstraintRequest(r.mode, r.key, label=r.label), CRASHED_SOURCE, error=r.error
        )
        for r in record.compile
        if not r.ok and r.source == CRASHED_SOURCE
    }


def merge_peaks(previous: MemoryRecord | None, peak: MemoryPeak) -> MemoryRecord:
    """The larger of two memory records, field by field (workers of one arm)."""
    new = MemoryRecord(**peak.to_dict())
    if previous is None:
        return new

    def larger(a: float | None, b: float | None) -> float | None:
        values = [v for v in (a, b) if v is not None]
        return max(values) if values else None

    return MemoryRecord(
        peak_rss_mb=max(previous.peak_rss_mb, new.peak_rss_mb),
        peak_rss_anon_mb=larger(previous.peak_rss_anon_mb, new.peak_rss_anon_mb),
        peak_rss_file_mb=larger(previous.peak_rss_file_mb, new.peak_rss_file_mb),
        samples=previous.samples + new.samples,
        source=new.source if new.source != "none" else previous.source,
    )


@dataclass(kw_only=True)
class Arm:
    """Runs the jobs of one arm; see the module docstring."""

    model: ModelUnderTest
    mode: str
    settings: RunSettings
    n_ctx: int
    stop: tuple[str, ...]  # stop strings of free text; a grammar ends the JSON itself
    make_worker: Callable[[], Worker]
    record: ArmRecord  # replaced as things happen
    on_sample: Callable[[SampleRecord], None]
    families: Sequence[Family]
    # a re-timed sample, superseding the one `on_sample` had (default: on_sample)
    on_retimed: Callable[[SampleRecord], None] | None = None
    # where CPU times are read (None: psutil; tests pass fakes)
    cpu_times: CpuTimes | None = None
    note: Callable[[str], None] = lambda message: None
    # told which job is about to run (the timeline tags its rows with it)
    on_job: Callable[[Job], None] = lambda job: None
    worker: Worker | None = None
    waits: Waits = field(default_factory=Waits)  # the clock and sleep of `--delay`
    reports: dict[str, CompileReport] = field(default_factory=dict)
    requests: dict[int, ConstraintRequest | None] = field(default_factory=dict)
    failures_in_a_row: int = 0

    def __post_init__(self) -> None:
        if engine_mode(self.mode) != "none":  # a grammar ends the JSON itself
            self.stop = ()
        self.end = end_policy(self.settings, self.mode)
        self.extraction = extraction_for(self.settings.parse, reference_of(self.settings.task))
        self.meter = CpuMeter(self._our_pids, self.cpu_times)

    def _our_pids(self) -> tuple[int, ...]:
        """The worker (first) and this process: the CPU time that is the run's own."""
        return (self._worker_pid(), os.getpid())

    def _worker_pid(self) -> int:
        # an in-process worker (tests) is this process
        return getattr(self.worker, "pid", None) or os.getpid()

    def describe(self) -> str:
        return f"{self.model.label}, {self.mode}"

    # -- the loop ------------------------------------------------------------------
    def run(self, jobs: list[Job], retime: Sequence[tuple[Job, SampleRecord]] = ()) -> None:
        """Decode every job in order, then re-time the contended ones and `retime` (an
        earlier session's contended samples, with their jobs). Raises ArmGaveUp (or the
        cause of a failed first start); the worker is always closed and its memory peak
        recorded."""
        if not jobs and not retime:
            return
        self.requests = {
            job.index: None
            if job.skip_reason is not None
            else request_for(self.mode, job.example.schema, job.example.schema_id)
            for job in [*jobs, *(job for job, _ in retime)]
        }
        decoded = [job for job in jobs if job.skip_reason is None]
        self.reports = {**crashed_verdicts(self.record), **self.reports}
        contended_now: list[tuple[Job, SampleRecord]] = []
        try:
            if decoded:  # no worker at all when every job left is a skipped one
                self._start(decoded[0], first_session=self.record.load_s is None)
            for position, job in enumerate(jobs):
                if job.skip_reason is None and job is not decoded[0]:
                    self._pause(self.settings.delay)
                self.on_job(job)
                sample, failure = self.run_job(job)
                self.on_sample(sample)
                if needs_retime(sample):
                    contended_now.append((job, sample))
                if failure is not None:
                    later = (j for j in jobs[position + 1 :] if j.skip_reason is None)
                    self._after_failure(job, failure, next(later, None))
            if self.settings.retime == "contended":
                self._retime_all([*retime, *contended_now])
        finally:
            self._retire_worker()

    def _pause(self, seconds: float) -> None:
        """`--delay`: sleep between two examples; the time is recorded even when Ctrl-C
        cuts it short."""
        if seconds <= 0:
            return
        start = self.waits.clock()
        try:
            self.waits.sleep(seconds)
        finally:
            paused = self.record.paused_s + self.waits.clock() - start
            self.record = replace(self.record, paused_s=paused)

    def run_job(self, job: Job) -> tuple[SampleRecord, ExampleFailure | None]:
        """The per-job step: decode (unless skipped or the constraint is unsupported),
        score, and say whether the worker failed on it."""
        request = self.requests[job.index]
        report = self.reports.get(request.key) if request is not None else None
        failure: ExampleFailure | None = None
        wall: WallClock | None = None
        cpu: CpuUse | None = None
        if job.skip_reason is not None:
            gen = skipped_generation(job.skip_reason)
        elif report is not None and not report.ok:
            gen = unsupported_generation(report)
        else:
            gen, failure, cpu = self._decode(job, request)
            if failure is None:  # the answer just came back: its end on the wall clock
                wall = wall_clock(gen, time.time())
        sample = build_sample(
            job, self.model.label, self.mode, gen, self.families, report, self.extraction, wall
        )
        if wall is not None:  # answered: who had the CPU meanwhile
            sample = replace(sample, cpu=cpu)
        return sample, failure

    def _decode(
        self, job: Job, request: ConstraintRequest | None
    ) -> tuple[Generation, ExampleFailure | None, CpuUse]:
        """One decode of `job`, with who had the CPU meanwhile."""
        before = self.meter.snapshot()
        gen, failure = self._generate(job, request)
        return gen, failure, self._cpu_use(before, self.meter.snapshot())

    def _cpu_use(self, before: CpuSnapshot, after: CpuSnapshot) -> CpuUse:
        share = self.meter.share(before, after)
        worker_s = self.meter.seconds(before, after, self._worker_pid())
        return CpuUse(
            others_share=None if share.others is None else round(share.others, 4),
            steal_share=None if share.steal is None else round(share.steal, 4),
            worker_cpu_s=None if worker_s is None else round(worker_s, 3),
        )

    def _generate(
        self, job: Job, request: ConstraintRequest | None
    ) -> tuple[Generation, ExampleFailure | None]:
        assert self.worker is not None
        draw = job.sampling
        decode = DecodeSettings(
            max_tokens=job.max_tokens,
            stop=self.stop,
            constraint=request,
            temperature=draw.temperature if draw else 0.0,
            seed=draw.seed if draw else 0,
            end=self.end,
            prefix=job.prefix,
        )
        try:
            gen = self.worker.generate(job.prompt, decode, timeout=self.settings.timeout)
        except WORKER_FAILURES as exc:
            failure = example_failure(exc, f"on example '{job.example.id}' ({self.describe()})")
            return nothing_decoded(failure.finish_reason, failure.message), failure
        self.failures_in_a_row = 0
        return gen, None

    # -- re-timing -----------------------------------------------------------------
    def _retime_all(self, pending: Sequence[tuple[Job, SampleRecord]]) -> None:
        """`--retime contended`: each contended example decoded again until a clean pass
        (at most --retime-max passes). A worker failure ends re-timing for the arm: the
        examples left keep their first pass (a later --resume tries them again)."""
        if not pending:
            return
        self.note(
            f"re-timing {len(pending)} contended example{'s' * (len(pending) != 1)} "
            f"of {self.describe()} (--retime contended)"
        )
        for job, first in pending:
            if self.worker is None:  # lost on the arm's last job
                try:
                    self._start(job, first_session=False)
                except WORKER_FAILURES as exc:
                    self.note(f"re-timing stopped for {self.describe()}: {exc}")
                    return
            retimed = self._retime(job, first)
            if retimed is None:
                return
            (self.on_retimed or self.on_sample)(retimed)

    def _retime(self, job: Job, first: SampleRecord) -> SampleRecord | None:
        """`first` with the timings of a clean pass, or of no pass but with the disturbed
        ones recorded, or marked as a mismatch; None when the worker failed."""
        request = self.requests[job.index]
        disturbed: list[tuple[SampleRecord, CpuUse]] = []
        passes = first.passes
        for _ in range(self.settings.retime_max):
            self.on_job(job)
            gen, failure, cpu = self._decode(job, request)
            if failure is not None:
                self.note(f"re-timing stopped: {failure.message}")
                if failure.worker_lost:
                    self._retire_worker()
                return None
            passes += 1
            if gen.text != first.raw_output:  # not the same answer: its timings are not
                self.note(
                    f"re-timing: example '{first.id}' ({self.describe()}) answered "
                    f"differently on pass {passes}; its first pass's timings are kept"
                )
                return replace(
                    first,
                    passes=passes,
                    retime_mismatch=True,
                    timings_disturbed=[d.timings for d, _ in disturbed],
                    cpu_disturbed=[c for _, c in disturbed],
                )
            timed = replace(
                first,
                timings=compute_timings(gen),
                wall=wall_clock(gen, time.time()),
                runtime_counters=gen.runtime_counters,
                step_times=step_times(gen.step_ns),
                cached_prompt_tokens=gen.cached_prompt_tokens,  # what the timings served
                cpu=cpu,
            )
            if not cpu.contended:
                earlier = [(first, first.cpu), *disturbed]
                return replace(
                    timed,
                    passes=passes,
                    timings_disturbed=[d.timings for d, _ in earlier],
                    cpu_disturbed=[c for _, c in earlier if c is not None],
                )
            disturbed.append((timed, cpu))
        return replace(  # no clean pass: the first pass's timings stay
            first,
            passes=passes,
            timings_disturbed=[d.timings for d, _ in disturbed],
            cpu_disturbed=[c for _, c in disturbed],
        )

    def _after_failure(self, job: Job, failure: ExampleFailure, upcoming: Job | None) -> None:
        """Record the failure; give up after too many in a row, else replace a lost
        worker (warmed up on the next job, not on the one that failed)."""
        self.failures_in_a_row += 1
        entry = WorkerFailure(job.index, job.example.id, failure.finish_reason, failure.message)
        self.record = replace(self.record, worker_failures=[*self.record.worker_failures, entry])
        self.note(failure.message)
        if failure.worker_lost:
            self._retire_worker()
        if upcoming is None:
            return
        limit = self.settings.max_crashes
        if self.failures_in_a_row >= limit:
            raise ArmGaveUp(
                f"gave up on {self.describe()} after {self.failures_in_a_row} failed "
                f"examples in a row (--max-crashes {limit}); last: {failure.message}",
                crashed=failure.worker_lost,
            )
        if failure.worker_lost:
            self.record = replace(self.record, restarts=self.record.restarts + 1)
            try:
                self._start(upcoming, first_session=False)
            except WORKER_FAILURES as exc:
                raise ArmGaveUp(
                    f"could not restart the model worker for {self.describe()}: {exc}",
                    crashed=worker_failure(exc, "").worker_lost,
                ) from None

    # -- worker lifecycle ----------------------------------------------------------
    def _start(self, warmup_job: Job, *, first_session: bool) -> None:
        """A worker ready to decode: loaded, every constraint compiled, warmed up."""
        self._load(first_session)
        self._compile_all(timed=first_session)
        if self.settings.warmup:
            self._warmup(warmup_job)

    def _load(self, first_session: bool) -> None:
        if self.worker is None:
            self.worker = self.make_worker()
        load_info, load_s = self.worker.load(self.n_ctx)
        if first_session:
            self.record = replace(
                self.record, n_ctx=load_info.n_ctx, load_s=load_s, runtime=load_info.runtime
            )
        else:
            self.record = replace(self.record, reload_s=[*self.record.reload_s, load_s])

    def _compile_all(self, *, timed: bool) -> None:
        """Compile each distinct constraint of the arm in the current worker. With `timed`
        (the arm's first session) each is compiled twice (first, cached) for the record.

        A compile that raises in the engine, kills or hangs the worker makes that
        constraint unsupported (a crash, `CRASHED_SOURCE`); after a lost worker a fresh
        one is loaded, and compiling goes on with the next one."""
        records: list[CompileRecord] = []
        distinct = {r.key: r for r in self.requests.values() if r is not None}
        compiled: list[ConstraintRequest] = []  # in the current worker
        for request in distinct.values():
            known = self.reports.get(request.key)
            if known is not None and not known.ok:
                continue  # refused before: nothing will decode under it
            try:
                report = self._compile(request)
                if timed:
                    records.append(compile_record(report, self._compile(request).seconds))
            except WorkerError as exc:  # the engine raised instead of refusing: a crash
                if exc.remote_type == "UserError":
                    raise
                error = f"compiling it raised {exc.remote_type}: {exc}"
                self.note(f"constraint for schema '{request.label}' ({self.describe()}): {error}")
                report = CompileReport.new(request, CRASHED_SOURCE, error=error)
                records.append(compile_record(report, None))
            except (WorkerDied, WorkerTimeout) as exc:
                report = self._compile_killed_worker(request, exc)
                records.append(compile_record(report, None))
                self._retire_worker()
                self._load(first_session=False)
                for done in compiled:  # the fresh worker needs them too (untimed)
                    self._compile(done)
            else:
                compiled.append(request)
            self.reports[request.key] = known or report
        if timed:
            self.record = replace(self.record, compile=records)
        else:  # a crash in a later session is recorded too: a resumed arm reads it back
            recorded = {r.key for r in self.record.compile}
            late = [r for r in records if r.key not in recorded]
            self.record = replace(self.record, compile=[*self.record.compile, *late])

    def _compile(self, request: ConstraintRequest) -> CompileReport:
        assert self.worker is not None
        return self.worker.compile_constraint(request, timeout=self.settings.compile_timeout)

    def _compile_killed_worker(
        self, request: ConstraintRequest, exc: WorkerDied | WorkerTimeout
    ) -> CompileReport:
        what = worker_failure(exc, "compiling it", timeout_option="--compile-timeout").line
        self.note(f"constraint for schema '{request.label}' ({self.describe()}): {what}")
        return CompileReport.new(request, CRASHED_SOURCE, error=what)

    def _warmup(self, job: Job) -> None:
        """One short untimed generation so the first measured job pays no first-call costs
        (page faults on the mmapped weights, thread pool start, JIT compilation in a
        grammar engine). If it kills the worker, a fresh one starts without it."""
        assert self.worker is not None
        request = self.requests[job.index]
        usable = request is None or self.reports[request.key].ok
        settings = DecodeSettings(max_tokens=WARMUP_TOKENS, constraint=request if usable else None)
        try:
            self.worker.generate(job.prompt, settings, timeout=self.settings.timeout)
        except WorkerError as exc:
            self.record = replace(self.record, warmup_error=f"{exc.remote_type}: {exc}")
        except (WorkerDied, WorkerTimeout) as exc:
            message = worker_failure(exc, "during the warm-up").line
            self.record = replace(self.record, warmup_error=message)
            self.note(f"{message} ({self.describe()}); continuing without it")
            self._retire_worker()
            self._load(first_session=False)
            self._compile_all(timed=False)

    def _retire_worker(self) -> None:
        if self.worker is not None:
            worker, self.worker = self.worker, None
            self.record = replace(
                self.record, memory=merge_peaks(self.record.memory, worker.close())
            )
