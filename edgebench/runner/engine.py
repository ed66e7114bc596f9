"""The run engine: everything that decodes goes through here (`edgebench run` and
`edgebench consistency`), so resume, timeouts and crash isolation hold for all of it.
`execute` takes one `RunRequest` and one `RunEnvironment` (runner/request.py); the CLI
reaches it through runner/start.py: `start_run`.

    execute()
      folder    RunFolder.create (new) or .reopen (--resume): locked for the whole run
      begin     manifest.json (new), or the stored one checked against what would run now
                and samples.jsonl reduced to its complete records (no torn line, no
                worker failures: those jobs run again)
      plan      per model: count tokens in a worker, token budget per schema; a --sample
                drawn from the rows that fit; n_ctx from the examples decoded (those
                that do not fit --max-context are marked skipped), memory check, then
                the run kind's jobs (every model before any arm runs; the figures
                from runner/planning.py, the workers and manifest here)
      arms      per (model, constraint mode) an `Arm` (runner/arm.py): a worker, then per
                job generate -> score -> append to samples.jsonl (fsynced); a job the
                worker dies on is recorded and a fresh worker goes on
      fidelity  a run with two or more GGUF variants of one model: KL and top-1
                agreement of each against the highest-precision one (runner/fidelity.py,
                fidelity.json; `--no-fidelity` skips it)
      finish    manifest.json and summary.json, each written atomically

Models' arms run one after another, so each peak RSS is its own. A mode a model's runtime
cannot apply (gbnf on ONNX) is recorded as a skipped arm with the reason.

A run is an append-only log: whatever stops it (Ctrl-C, a full disk, a power cut), the
records already appended stay, and `--resume` continues from them.

`--wait-cool` waits for the CPU to cool after planning, before the first arm (each
session: a resumed run waits again), recorded in the manifest; `--delay` pauses between
examples inside each arm (runner/arm.py), left out of the arm's wall_s.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from edgebench.backends.base import now
from edgebench.constraints import closes
from edgebench.errors import RunFailure, UserError
from edgebench.failures import (
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    is_user_error,
    run_failure,
    write_failure,
)
from edgebench.io import JsonlAppender, WriteFailed, write_jsonl_atomic
from edgebench.metrics import select_families
from edgebench.metrics.base import Family
from edgebench.metrics.score import describe_families
from edgebench.runfolder.folder import RunFolder
from edgebench.runfolder.read import (
    POWER_LOG,
    TIMELINE,
    read_fidelity,
    read_manifest,
    read_rows,
    read_samples,
    superseded,
)
from edgebench.runfolder.records import (
    SCHEMA_VERSION,
    ArmRecord,
    DatasetRecord,
    GitCommit,
    JobKey,
    Manifest,
    MemoryCheck,
    ModelPlan,
    PowerReading,
    ResumeRecord,
    RunSettings,
    RunStatus,
    SampleRecord,
    Summary,
    TaskRecord,
    TimelineRow,
    arm_key,
)
from edgebench.runner.arm import Arm, ArmGaveUp
from edgebench.runner.cooling import wait_until_cool
from edgebench.runner.fidelity import (
    already_measured,
    measure_fidelity,
    variant_groups,
)
from edgebench.runner.interrupt import StopRequest
from edgebench.runner.jobs import Job, RunKind
from edgebench.runner.planning import Counted, ModelJobs, Planner, Selection, unfit_note
from edgebench.runner.power import (
    check_power_settings,
    choose,
    copy_power_log,
    measure_idle,
    needs_idle,
    power_record,
)
from edgebench.runner.prefixes import check_prefix_cache
from edgebench.runner.preflight import check_memory
from edgebench.runner.request import Progress, RunEnvironment, RunRequest
from edgebench.runner.resume import resume_conflict, resume_point
from edgebench.runner.samples import needs_retime
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.subset import select_examples
from edgebench.runner.timeline import HeatReader, Timeline, lost_note
from edgebench.runner.workers import (
    Worker,
    arm_engine,
    skip_reason,
    start_worker,
)
from edgebench.runtimes import needs_cpu_build
from edgebench.summary import summarize
from edgebench.system.build_features import build_facts
from edgebench.system.build_fit import check_build_fits
from edgebench.system.cpu_share import CpuMeter, CpuTimes, PsutilTimes, process_tree
from edgebench.system.device import device_info
from edgebench.system.power import PowerChoice
from edgebench.system.versions import git_commit, package_versions, runtime_build, utc_now
from edgebench.tasks.base import PromptingTask, prompt_template_for

# The room held for the manifest's last write (runfolder.folder.RunFolder.reserve).
RESERVE_MIN_BYTES = 32 * 1024
RESERVE_FACTOR = 4
# the idle baseline's wait asks whether the run was stopped this often, seconds
IDLE_STEP_S = 0.25


# What can end an arm early: recorded as the arm's status, then the run goes on (or stops,
# for Ctrl-C and a full disk). Anything else is a bug and propagates.
_ARM_ENDINGS = (
    ArmGaveUp,
    WorkerDied,
    WorkerTimeout,
    WorkerError,
    UserError,
    KeyboardInterrupt,
    OSError,
)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped the run after its folder was made."""

    def __init__(self, run_dir: Path, n_samples: int, resume: str | None) -> None:
        super().__init__(f"interrupted; {n_samples} completed examples kept in {run_dir}")
        self.run_dir = run_dir
        self.n_samples = n_samples
        # the command that continues the run; None: nothing was written to continue
        self.resume = resume


@dataclass
class RunResult:
    run_dir: Path
    summary: Summary
    # Jobs the worker never answered (crashed or timed out): --resume runs them again.
    worker_failures: int = 0


def resume_command(kind: str, run_dir: Path) -> str:
    """The command that continues a run of `kind` (its command has the kind's name), the
    folder quoted for the shell so the hint can be pasted whatever the path holds."""
    return f"edgebench {kind} --resume {shlex.quote(str(run_dir))}"


def execute(request: RunRequest, environment: RunEnvironment | None = None) -> RunResult:
    """Run `request` (runner/request.py) into one run folder: each model once per
    constraint mode, each model and mode in its own worker, one after another. The whole
    dataset sizes the automatic token budget, so a subset measures the same thing as the
    full run; n_ctx fits the examples decoded, and a `--sample` is drawn from those that
    fit. With `request.resume` the folder's complete records are kept and only the
    missing jobs run; a resumed run keeps the device identity it started with.

    `environment` (default: the real machine's workers, power, heat and CPU times, no
    progress shown) is what a test or a library caller replaces."""
    env = environment or RunEnvironment()
    settings, models, task = request.settings, request.models, request.task
    dataset, resume, kind = request.dataset, request.resume, request.kind
    labels = [m.label for m in models]
    if not models:
        raise UserError("--model: no model to run")
    if len(set(labels)) != len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise UserError(f"--model: {twice!r} is named twice")
    if env.worker_factory is None and needs_cpu_build(m.backend for m in models):
        check_build_fits()  # a build for another CPU: one line, not a SIGILL per example
    examples, sample = select_examples(dataset, settings)
    if not examples:
        raise UserError("the dataset has no examples to run")
    dataset_record = replace(request.dataset_record, sample=sample)
    families = select_families(task.metric_family, settings.metrics, settings.metric_params)
    prompt_template_for(task, settings.prompt)  # an unknown style: one line, no folder
    # Rendering runs each model's chat template: a failure here leaves no folder behind.
    # Every example's prompt is rendered: a sample is drawn from those that fit.
    built = [task.build_prompt(ex, settings.prompt) for ex in dataset]
    dataset_prompts = [m.prompt_format.render_many(built) for m in models]
    chosen = Selection.of(dataset, examples, dataset_prompts)
    if settings.prefix_cache:
        check_prefix_cache(models, settings.constraints)
    check_power_settings(settings)
    # the source chosen (a --power-command polled once) before the folder is made: a
    # meter that cannot give its first reading is one line and leaves nothing behind
    choice = env.power or choose(settings)
    folder = _open_folder(settings, kind, labels, resume)
    run: _Run | None = None
    try:
        run = _Run(folder, request, env, chosen, families)
        # Ctrl-C is remembered from here on (a finalizer cannot swallow it)
        with run.stop.installed():
            try:
                run.begin(dataset_record, resume)
                run.start_power(choice, env.timeline_interval, env.heat)
                first_worker, plans = run.plan()
            except OSError as exc:
                raise run.stopped(exc) from None
            except RunInterrupted:
                raise
            except KeyboardInterrupt:  # the idle baseline, counting tokens, sizing n_ctx
                raise run.stopped(KeyboardInterrupt()) from None
            failure = run.run_arms(first_worker, plans)
            failure = run.fidelity(failure)
            return run.finish(failure)
    except RunInterrupted:
        raise
    except KeyboardInterrupt:  # between the steps above: still the run's own ending
        if run is None:
            raise
        raise run.stopped(KeyboardInterrupt()) from None
    finally:
        with StopRequest().deferred():  # a second Ctrl-C cannot cut this short
            if run is not None:  # the timeline's thread ends with the run, however it ends
                run.stop_timeline()
            folder.release()
            if run is None or not folder.manifest_path.exists():
                _remove_if_empty(folder.path, made=not resume and settings.out is None)


def _open_folder(
    settings: RunSettings, kind: RunKind, labels: list[str], resume: bool
) -> RunFolder:
    """The run folder, new or reopened, locked. A refused write here (the lock file, the
    folder; a full disk or not) is one line: nothing was written, or for --resume the
    folder is unchanged."""
    try:
        if resume:
            if settings.out is None:
                raise UserError("--resume needs the run folder to continue")
            return RunFolder.reopen(settings.out)
        name = settings.task if kind.name == "run" else f"{kind.name}-{settings.task}"
        return RunFolder.create(settings.out, " + ".join(labels), name, utc_now())
    except OSError as exc:  # io.WriteFailed too: every refused write is exit 1
        where = settings.out if settings.out is not None else Path("runs")
        if resume:
            again = f"continue with `{resume_command(kind.name, where)}`"
            raise write_failure(exc, where, "the run folder is unchanged", again) from None
        again = "run the same command again"
        raise write_failure(exc, where, "nothing was written", again) from None


def _remove_if_empty(path: Path, made: bool) -> None:
    """A run folder this run made and left empty (stopped before its manifest) goes."""
    if made:
        with contextlib.suppress(OSError):
            path.rmdir()


def arm_job(job: Job, mode: str) -> Job:
    """The job as the arm of `mode` runs it: a `+close` arm also skips what fits only
    without its closing room."""
    if closes(mode) and job.skip_reason is None and job.close_skip_reason is not None:
        return replace(job, skip_reason=job.close_skip_reason)
    return job


# Where runs read CPU times unless told (a module attribute: the unit tests' fixture puts
# a quiet fake machine here, so a busy test machine re-times nothing).
CPU_TIMES: Callable[[], CpuTimes] = PsutilTimes


def status_of(failure: BaseException | None) -> RunStatus:
    """A run's (or an arm's) status after `failure` (None: all went well)."""
    if failure is None:
        return "completed"
    if isinstance(failure, KeyboardInterrupt):
        return "interrupted"
    if isinstance(failure, ArmGaveUp):
        return "crashed" if failure.crashed else "failed"
    if isinstance(failure, WorkerDied | WorkerTimeout):
        return "crashed"
    return "failed"


def _error_text(failure: BaseException | None) -> str | None:
    if failure is None or isinstance(failure, KeyboardInterrupt):
        return None
    return str(failure) or type(failure).__name__


@dataclass
class _Run:
    """The state of one run while it executes (see the module docstring)."""

    folder: RunFolder
    request: RunRequest  # settings, models, task, kind, device name
    env: RunEnvironment  # workers, progress, waits, power, fidelity, CPU times
    chosen: Selection  # the examples decoded and every prompt (a --sample: redrawn)
    families: list[Family]
    stop: StopRequest = field(default_factory=StopRequest)  # Ctrl-C, remembered
    samples: list[SampleRecord] = field(default_factory=list)  # the records so far
    resumed: bool = False
    t_start: float = field(default_factory=now)
    manifest: Manifest = field(init=False)
    timeline: Timeline | None = None  # the 1 Hz sampler, while the run decodes

    def __post_init__(self) -> None:
        self.specs = [(m, mode) for m in self.models for mode in self.settings.constraints]
        self.planner = Planner(self.request)

    @property
    def settings(self) -> RunSettings:
        return self.request.settings

    @property
    def models(self) -> list[ModelUnderTest]:
        return self.request.models

    @property
    def task(self) -> PromptingTask:
        return self.request.task

    @property
    def kind(self) -> RunKind:
        return self.request.kind

    @property
    def progress(self) -> Progress | None:
        return self.env.progress

    @property
    def resume(self) -> str:
        return resume_command(self.kind.name, self.folder.path)

    def cpu_source(self) -> CpuTimes:
        """A new source of CPU times: the environment's, else `CPU_TIMES`."""
        return (self.env.cpu_times or CPU_TIMES)()

    def make_worker(self, model: ModelUnderTest, mode: str) -> Worker:
        if self.env.worker_factory is not None:
            return self.env.worker_factory(model, mode)
        return start_worker(model, mode, threads=self.settings.threads, guard=self.settings.guard)

    def note(self, message: str) -> None:
        if self.progress is not None:
            self.progress.note(message)

    def _write(self, manifest: Manifest, *, last: bool = False) -> None:
        """The manifest kept and written; `last`: how the run ended (the disk's reserve
        is given back for it when the disk is full)."""
        self.manifest = manifest
        self.folder.write_manifest(manifest, last=last)

    # -- begin -----------------------------------------------------------------------
    def begin(self, dataset: DatasetRecord, resume: bool) -> None:
        if not resume:
            self._write(self._initial_manifest(dataset))
            self._reserve_room()
            return
        run_dir = self.folder.path
        stored = read_manifest(run_dir)
        if stored.kind != self.kind.name:
            raise UserError(
                f"cannot resume {run_dir}: it was made by `edgebench {stored.kind}`; "
                f"continue it with `{resume_command(stored.kind, run_dir)}`"
            )
        conflict = resume_conflict(
            stored, self.settings, self.models, self.task, dataset, self.request.device_name
        )
        if conflict is None and stored.consistency != self.kind.plan_record():
            conflict = "the sampling plan differs (--samples, --temperatures, --seed)"
        if conflict is not None:
            raise UserError(f"cannot resume {run_dir}: {conflict}")
        point = resume_point(*read_samples(run_dir))
        self.samples = point.samples
        self.resumed = True
        record = ResumeRecord(
            at=utc_now(),
            command=list(sys.argv),
            previous_status=stored.status,
            samples_kept=len(point.samples),
            torn_line_dropped=point.torn_line,
            worker_failures_retried=point.retried,
            duplicates_dropped=point.duplicates,
            stale_lock=self.folder.lock.stale,
        )
        resumed = replace(
            stored,
            status="running",
            error=None,
            resume_with=None,
            resumes=[*stored.resumes, record],
        )
        self._write(resumed)
        self._reserve_room()

    def _reserve_room(self) -> None:
        """Room for the manifest's last write, however full the disk gets: a few times
        the manifest now (arms, failures and resumes make it grow)."""
        size = self.folder.manifest_path.stat().st_size
        self.folder.reserve(max(RESERVE_MIN_BYTES, RESERVE_FACTOR * size))

    def _initial_manifest(self, dataset: DatasetRecord) -> Manifest:
        """What is known before a model loads; planning and the arms add to it."""
        git = git_commit()
        return Manifest(
            schema_version=SCHEMA_VERSION,
            kind=self.kind.name,  # type: ignore[arg-type]
            run_id=self.folder.path.name,
            status="running",
            started_at=utc_now(),
            command=list(sys.argv),
            settings=self.settings,
            models=[m.record() for m in self.models],
            task=TaskRecord(
                self.task.name,
                prompt_template_for(self.task, self.settings.prompt),
                self.task.metric_family,
                prompt_style=self.settings.prompt,
            ),
            dataset=dataset,
            device=device_info(self.settings.threads, name=self.request.device_name),
            packages=package_versions(),
            git=GitCommit.from_json(git) if git else None,
            families=describe_families(self.families, self.task.metric_family),
            arms=[],
            consistency=self.kind.plan_record(),
        )

    # -- power and the timeline ----------------------------------------------------
    def start_power(self, choice: PowerChoice, interval: float, heat: HeatReader) -> None:
        """Record the power source, start the timeline and, before any model loads,
        measure the idle baseline (a resumed run keeps its first session's)."""
        record = power_record(choice, self.settings, self.manifest.power)
        if self.settings.timeline:
            self.timeline = Timeline(
                self.folder.path,
                choice.source,
                interval=interval,
                heat=heat,
                cpu=CpuMeter(process_tree, self.cpu_source()),
            )
            self.timeline.open(resumed=self.resumed)
            self.timeline.start()
        if needs_idle(record, self.settings):
            seconds = self.settings.idle_baseline
            self.note(f"idle power baseline: {seconds:g} s with no model running")
            record = measure_idle(record, seconds, self.timeline, sleep=self._idle_sleep)
        self._write(replace(self.manifest, power=record))

    def _idle_sleep(self, seconds: float) -> None:
        """The idle baseline's wait, in short steps that ask whether the run was stopped
        (a signal whose KeyboardInterrupt a finalizer swallowed still ends it now)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, IDLE_STEP_S))
            self.stop.check()

    def stop_timeline(self) -> None:
        if self.timeline is not None:
            timeline, self.timeline = self.timeline, None
            timeline.stop()
            for message in (timeline.error, lost_note(timeline.lost)):
                if message is not None:
                    self.note(message)

    def _power_log_copied(self, failure: BaseException | None) -> BaseException | None:
        """The --power-log rows of the run into the folder; a log that cannot be read
        now costs the energy figures (with the reason), never the run's records. A copy
        the run folder's disk refuses stops the run as any refused write does (the
        run's ending, returned: `--resume` copies the rows again)."""
        log, record = self.settings.power_log, self.manifest.power
        if log is None or record is None:
            return failure
        try:
            lost = copy_power_log(log, self.folder.path, record, self.samples)
            if lost:
                lines = "line" if lost == 1 else "lines"
                self.note(f"--power-log: {lost} {lines} near the run could not be read (lost)")
        except WriteFailed as exc:  # power-log.jsonl: the run folder's disk, not the log
            return failure or exc
        except (UserError, OSError) as exc:
            message = f"--power-log: {exc}"
            self.note(message)
            self.manifest = replace(self.manifest, power=replace(record, reason=message))
        return failure

    def _at(self, model: ModelUnderTest, mode: str, job: Job | None) -> None:
        if self.timeline is not None:
            example = job.example.id if job is not None else None
            self.timeline.at(arm_key(model.label, mode) if job else None, example)

    # -- plan ------------------------------------------------------------------------
    def plan(self) -> tuple[Worker, list[ModelJobs]]:
        """Token counts, budget, context size and the memory check for every model before
        any arm runs (a prompt that does not fit one model fails the run before the others
        spend an hour), each model's counted in a worker of its first arm; a `--sample` is
        then drawn from the examples every model can run (runner/planning.py has the
        figures). The first model's worker is returned for its first arm to keep."""
        counted: list[Counted] = []
        first_worker: Worker | None = None
        for position, model in enumerate(self.models):
            usable = [m for mm, m in self.specs if mm is model and skip_reason(model, m) is None]
            worker = self.make_worker(model, usable[0] if usable else "none")
            try:
                counted.append(self.planner.count(worker, self.chosen, position))
            except BaseException as exc:
                worker.close()
                if first_worker is not None:
                    first_worker.close()
                self._stop_before_arms(exc, model)
                raise
            if first_worker is None:
                first_worker = worker
            else:  # it would only hold memory while the first model is measured
                worker.close()
        assert first_worker is not None
        plans: list[ModelJobs] = []
        model = self.models[0]
        try:
            if self.settings.sample is not None:
                self._draw_from_fitting(counted)
            for position in range(len(self.models)):
                model = self.models[position]  # the one named if its plan fails
                plans.append(self._plan_with(position, counted[position]))
        except BaseException as exc:
            first_worker.close()
            self._stop_before_arms(exc, model)
            raise
        try:
            self._write(self.manifest)
        except BaseException:
            first_worker.close()
            raise
        return first_worker, plans

    def _draw_from_fitting(self, counted: list[Counted]) -> None:
        """`--sample`: drawn from the examples every model can run, recorded with those
        that cannot fit (a resumed run must draw the same); say how many could not."""
        self.chosen, unfit = self.planner.draw(self.chosen, counted)
        dataset, whole = self.manifest.dataset, self.chosen.dataset
        assert dataset.sample is not None
        sample = replace(
            dataset.sample,
            ids=[example.id for example in self.chosen.examples],
            n_unfit=len(unfit),
            unfit_ids=[whole[i].id for i in unfit],
        )
        if self.resumed and sample != dataset.sample:
            raise UserError(
                f"cannot resume {self.folder.path}: the sample drawn now differs from the "
                "run's (were the tokenizer or the context limits changed?)"
            )
        self.manifest = replace(self.manifest, dataset=replace(dataset, sample=sample))
        if unfit:
            self.note(unfit_note(whole, unfit, self.settings.stratify))

    def _plan_with(self, position: int, counted: Counted) -> ModelJobs:
        """One model's plan into the manifest (a resumed run's must not have changed),
        its memory checked, then its jobs."""
        model = self.models[position]
        planned = self.planner.plan(position, counted, self.chosen)
        stored = self.manifest.models[position].plan
        if self.resumed and stored is not None and stored.decoding != planned.decoding:
            where = f" of {model.label}" if len(self.models) > 1 else ""
            raise UserError(
                f"cannot resume {self.folder.path}: the decoding plan{where} differs (token "
                "budget, stop strings, answer-ending policies or prefix cache; was the "
                "tokenizer changed, or the run made by an older edgebench?)"
            )
        memory = MemoryCheck(**planned.estimate.to_dict(), enforced=self.settings.check_memory)
        record = ModelPlan(planned.context.n_ctx, planned.decoding, memory)
        models = list(self.manifest.models)
        models[position] = replace(models[position], plan=record)
        self.manifest = replace(self.manifest, models=models)
        if self.settings.check_memory:
            check_memory(model, planned.estimate)
        return self.planner.jobs(position, counted, self.chosen, planned)

    def _stop_before_arms(self, exc: BaseException, model: ModelUnderTest) -> None:
        """Record why the run ended before its first arm; a worker failure becomes a
        one-line error naming the model and the folder."""
        self._mark_stopped(exc)
        if isinstance(exc, WorkerError | WorkerDied | WorkerTimeout):
            if is_user_error(exc):  # the worker refused the model file
                raise UserError(str(exc)) from None
            raise RunFailure(f"{exc} ({model.label}); run folder {self.folder.path}") from None

    def _mark_stopped(self, exc: BaseException, over: tuple[str, ...] = ("running",)) -> None:
        """The manifest of this session marked with how it ended, if its status is one of
        `over` and it can be written (a full disk may refuse even that)."""
        manifest: Manifest | None = getattr(self, "manifest", None)  # set by `begin`
        if manifest is None or manifest.status not in over:
            return
        with contextlib.suppress(OSError, KeyboardInterrupt):  # a second Ctrl-C too
            self._write(
                replace(
                    manifest,
                    status=status_of(exc),  # type: ignore[arg-type]
                    finished_at=utc_now(),
                    error=_error_text(exc),
                    resume_with=self.resume,
                ),
                last=True,
            )

    def stopped(self, exc: BaseException) -> Exception:
        """Ctrl-C or a refused write outside the arms (planning, the idle baseline, the
        first writes): the manifest marked where it can still be written, and the one-line
        ending that says what is kept and how to continue. With no manifest in the folder
        there is nothing to continue: the same command starts again."""
        self._mark_stopped(exc)
        written = self.folder.manifest_path.is_file()
        if isinstance(exc, KeyboardInterrupt):
            resume = self.resume if written else None
            return RunInterrupted(self.folder.path, len(self.samples), resume)
        if not written and isinstance(exc, OSError):
            again = "run the same command again"
            return write_failure(exc, self.folder.path, "nothing was written", again)
        return run_failure(exc, self.folder.path, len(self.samples), self.resume)

    # -- arms ------------------------------------------------------------------------
    def _put_arm(self, record: ArmRecord) -> None:
        """The manifest with `record` in place of its arm's earlier record (or added)."""
        arms = list(self.manifest.arms)
        keys = [a.key for a in arms]
        if record.key in keys:
            arms[keys.index(record.key)] = record
        else:
            arms.append(record)
        self.manifest = replace(self.manifest, arms=arms)

    def _write_manifest_after(self, failure: BaseException | None) -> BaseException | None:
        try:
            self.folder.write_manifest(self.manifest)
        except OSError as exc:  # a full disk stops the run; Ctrl-C still counts as such
            return failure if isinstance(failure, KeyboardInterrupt) else exc
        return failure

    def run_arms(self, first_worker: Worker, plans: list[ModelJobs]) -> BaseException | None:
        """Every arm in turn; a failed arm costs only itself, except Ctrl-C and disk
        errors, which stop the run. Returns the first failure."""
        failure: BaseException | None = None
        done: dict[tuple[str, str], set[JobKey]] = {}
        for sample in self.samples:
            done.setdefault((sample.model, sample.constraint), set()).add(sample.job_key)
        plan_of = {id(plan.model): plan for plan in plans}
        worker: Worker | None = first_worker
        try:
            self._wait_cool()
        except KeyboardInterrupt as exc:
            first_worker.close()
            return exc
        if self.resumed:  # the complete records only, so appends never follow a torn line
            try:
                write_jsonl_atomic(self.folder.samples_path, [s.to_json() for s in self.samples])
            except OSError as exc:
                first_worker.close()
                return exc
        with JsonlAppender(self.folder.samples_path) as log:

            def on_sample(sample: SampleRecord) -> None:
                log.append(sample.to_json())
                self.samples.append(sample)
                if self.progress is not None:
                    self.progress.advance(sample)
                self.stop.check()  # a Ctrl-C swallowed somewhere still ends the run here

            def on_retimed(sample: SampleRecord) -> None:
                """A re-timed example: its line supersedes the first (read.superseded)."""
                log.append(sample.to_json())
                self.samples = superseded([*self.samples, sample])
                self.stop.check()

            pending_of = {
                (model.label, mode): [
                    arm_job(job, mode)
                    for job in plan_of[id(model)].jobs
                    if job.key not in done.get((model.label, mode), set())
                ]
                for model, mode in self.specs
                if skip_reason(model, mode) is None
            }
            run_left = sum(len(jobs) for jobs in pending_of.values())  # for the run's ETA
            for model, mode in self.specs:
                reason = skip_reason(model, mode)
                if reason is not None:
                    self._put_arm(ArmRecord(model.label, mode, "skipped", skip_reason=reason))
                    arm_failure = self._write_manifest_after(None)
                else:
                    plan = plan_of[id(model)]
                    pending = pending_of[(model.label, mode)]
                    if worker is not None and model is not self.models[0]:
                        worker.close()  # not this model's: no arm of the first model ran
                        worker = None
                    arm_failure = self._run_arm(
                        model, mode, worker, plan, pending, (on_sample, on_retimed), run_left
                    )
                    run_left -= len(pending)
                    worker = None  # the first worker belongs to the first arm only
                failure = failure or arm_failure
                if isinstance(arm_failure, KeyboardInterrupt | OSError):
                    failure = arm_failure
                    break
        if worker is not None:
            worker.close()
        return failure

    def _wait_cool(self) -> None:
        """`--wait-cool`: wait for the CPU to cool before the first example, recorded."""
        target = self.settings.wait_cool
        if target is None:
            return
        waited = wait_until_cool(target, self.settings.wait_cool_timeout, self.env.waits, self.note)
        self.manifest = replace(self.manifest, wait_cool=[*self.manifest.wait_cool, waited])

    def _run_arm(
        self,
        model: ModelUnderTest,
        mode: str,
        worker: Worker | None,
        plan: ModelJobs,
        pending: list[Job],
        callbacks: tuple[Callable[[SampleRecord], None], Callable[[SampleRecord], None]],
        run_left: int,
    ) -> BaseException | None:
        """One arm's `pending` jobs, and the re-timing an earlier session left undone;
        `run_left`: the jobs left in the run, these included. `callbacks`: a new sample,
        a re-timed one."""
        record = self.manifest.arm(model.label, mode) or ArmRecord(model.label, mode, "running")
        retime = self._retime_left(model, mode, plan)
        if not pending and not retime:  # every job of this arm is already recorded
            if worker is not None:
                worker.close()
            self._put_arm(replace(record, status="completed", error=None))
            return None
        engine = arm_engine(model, mode)
        self._put_arm(replace(record, status="running", error=None, engine=engine))
        failure = self._write_manifest_after(None)
        if failure is not None:
            if worker is not None:
                worker.close()
            return failure
        t_arm, paused_before = self.env.waits.clock(), record.paused_s
        if self.progress is not None:
            done = len(plan.jobs) - len(pending)
            resumed = f" · resumed, {done} done" if done else ""
            description = f"{self.task.name} · {model.label}, {mode}{resumed}"
            self.progress.start(len(pending), description, run_left)
        arm = Arm(
            model=model,
            mode=mode,
            settings=self.settings,
            n_ctx=plan.n_ctx,
            stop=plan.stop,
            make_worker=lambda: self.make_worker(model, mode),
            record=self.manifest.arm(model.label, mode),  # type: ignore[arg-type]
            on_sample=callbacks[0],
            on_retimed=callbacks[1],
            cpu_times=self.cpu_source(),
            families=self.families,
            note=self.note,
            on_job=lambda job: self._at(model, mode, job),
            worker=worker,
            waits=self.env.waits,
        )
        try:
            arm.run(pending, retime)
        except _ARM_ENDINGS as exc:
            failure = exc
        finally:
            self._at(model, mode, None)
            if self.progress is not None:
                self.progress.stop()
        record = arm.record
        if self.manifest.device.runtime is None and record.runtime is not None:
            build = runtime_build(record.runtime)
            cpu_flags = self.manifest.device.cpu_flags
            device = replace(self.manifest.device, runtime=build, **build_facts(cpu_flags, build))
            self.manifest = replace(self.manifest, device=device)
        paused = record.paused_s - paused_before  # --delay: not the arm's time
        record = replace(
            record,
            wall_s=record.wall_s + self.env.waits.clock() - t_arm - paused,
            status=status_of(failure),  # type: ignore[arg-type]
            error=_error_text(failure),
        )
        if record.error is not None:
            self.note(record.error)
        self._put_arm(record)
        return self._write_manifest_after(failure)

    def _retime_left(
        self, model: ModelUnderTest, mode: str, plan: ModelJobs
    ) -> list[tuple[Job, SampleRecord]]:
        """An earlier session's contended samples of this arm that were not re-timed (it
        stopped before), with their jobs: `--resume` re-times them."""
        if self.settings.retime != "contended":
            return []
        jobs = {job.key: arm_job(job, mode) for job in plan.jobs}
        return [
            (jobs[s.job_key], s)
            for s in self.samples
            if (s.model, s.constraint) == (model.label, mode)
            and needs_retime(s)
            and s.job_key in jobs
        ]

    # -- fidelity --------------------------------------------------------------------
    def fidelity(self, failure: BaseException | None) -> BaseException | None:
        """The fidelity phase when the run has variants of one model and the arms were not
        stopped (Ctrl-C, a full disk); returns what stopped the run, if anything. A
        variant whose worker fails is recorded in fidelity.json, the run goes on."""
        if isinstance(failure, KeyboardInterrupt | OSError):
            return failure
        groups = variant_groups(self.manifest.models)
        if not groups or not self.settings.fidelity or self.kind.name != "run":
            return failure
        if self.resumed and already_measured(read_fidelity(self.folder.path), groups):
            return failure
        try:
            measure_fidelity(
                groups,
                self.samples,
                threads=self.settings.threads,
                write=self.folder.write_fidelity,
                factory=self.env.fidelity_factory,
                progress=self.progress,
                check_stop=self.stop.check,
            )
        except (KeyboardInterrupt, OSError) as exc:
            return exc
        return failure

    # -- finish ----------------------------------------------------------------------
    def _in_run_order(self, samples: list[SampleRecord]) -> list[SampleRecord]:
        """Retried jobs were appended at the end of a resumed run: restore run order."""
        arm_order = {(m.label, mode): n for n, (m, mode) in enumerate(self.specs)}
        planned = [Job(i, ex, "", 0) for i, ex in enumerate(self.chosen.examples)]
        job_order = {job.key: n for n, job in enumerate(self.kind.jobs(planned))}

        def position(sample: SampleRecord) -> tuple[int, int]:
            arm = arm_order.get((sample.model, sample.constraint), 0)
            return arm, job_order.get(sample.job_key, 0)

        return sorted(samples, key=position)

    def finish(self, failure: BaseException | None) -> RunResult:
        """Write the manifest and the summary; raise what stopped the run, if anything.
        A stop signal while they are written is held until both are whole, then the run
        ends as interrupted (its files written again as such)."""
        self.stop_timeline()
        failure = self._power_log_copied(failure)
        wall_s = (self.manifest.wall_s or 0.0) + now() - self.t_start
        with self.stop.deferred():
            if self.stop.requested and not isinstance(failure, KeyboardInterrupt):
                failure = KeyboardInterrupt()
            summary = self._final_files(failure, wall_s)
            if self.stop.requested and not isinstance(failure, KeyboardInterrupt):
                failure = KeyboardInterrupt()
                summary = self._final_files(failure, wall_s)
        lost = sum(1 for s in self.samples if s.worker_failure)
        completed = len(self.samples) - lost  # crashed and timed-out ones run again
        if isinstance(failure, KeyboardInterrupt):
            raise RunInterrupted(self.folder.path, completed, self.resume) from None
        if failure is not None:
            raise run_failure(failure, self.folder.path, completed, self.resume)
        return RunResult(run_dir=self.folder.path, summary=summary, worker_failures=lost)

    def _final_files(self, failure: BaseException | None, wall_s: float) -> Summary:
        """manifest.json and summary.json as the run ended (`failure`); samples.jsonl in
        run order after a resume. A refused write is one line with what is kept."""
        run_dir = self.folder.path
        manifest = replace(
            self.manifest,
            wall_s=wall_s,
            finished_at=utc_now(),
            status=status_of(failure),  # type: ignore[arg-type]
            error=_error_text(failure),
            # in the folder too: the terminal that would show it may be gone (SIGHUP)
            resume_with=None if failure is None else self.resume,
        )
        if isinstance(failure, KeyboardInterrupt) and not self.resumed:
            # Ctrl-C can land between writing a sample and counting it: the file decides.
            self.samples = read_samples(run_dir)[0]
        if self.resumed:
            self.samples = self._in_run_order(self.samples)
        path = self.folder.samples_path
        try:
            if self.resumed:
                write_jsonl_atomic(path, [s.to_json() for s in self.samples])
            path = self.folder.manifest_path
            self._write(manifest, last=True)
            timeline = read_rows(run_dir, TIMELINE, TimelineRow)
            power_log = read_rows(run_dir, POWER_LOG, PowerReading)
            summary = summarize(manifest, self.samples, timeline, power_log)
            path = self.folder.summary_path
            self.folder.write_summary(summary)
        except OSError as exc:
            if path != self.folder.manifest_path:  # it may say `completed` by now
                self._mark_stopped(exc, over=("running", "completed"))
            kept = (
                f"the previous {path.name} is unchanged and samples.jsonl holds "
                f"{len(self.samples)} examples"
            )
            raise write_failure(exc, path, kept, f"continue with `{self.resume}`") from None
        return summary
