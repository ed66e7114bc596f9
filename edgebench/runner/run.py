"""One benchmark run: the run folder, the plan every arm shares, the arms one after
another, and the summary.

    execute()
      folder    RunFolder.create (new) or .reopen (--resume): locked for the whole run
      begin     manifest.json (new), or the stored one checked against what would run now
                and samples.jsonl rewritten without a torn line or worker failures
      plan      count tokens in a worker, token budget per schema, n_ctx (examples that
                do not fit --max-context are marked skipped), memory check
      arms      per (model, constraint mode) an `Arm` (runner/arm.py): a worker, then
                per example generate -> score -> append to samples.jsonl (fsynced);
                an example the worker dies on is recorded and a fresh worker goes on
      finish    manifest.json and summary.json, each written atomically

A run is an append-only log: whatever stops it (Ctrl-C, a full disk, a power cut), the
examples already appended stay, and `--resume` continues from them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from edgebench.backends import backend_for
from edgebench.backends.base import now
from edgebench.errors import UserError
from edgebench.io import JsonlAppender, rewrite_jsonl, write_json_atomic
from edgebench.metrics import Family, select_families
from edgebench.metrics.apply import describe_families
from edgebench.runner import manifest as mf
from edgebench.runner.arm import (
    Arm,
    ArmGaveUp,
    ArmSpec,
    ExampleJob,
    Worker,
    compile_schemas,
)
from edgebench.runner.budget import plan_budget, plan_context, reference_text
from edgebench.runner.preflight import available_memory_bytes, check_memory, estimate_memory
from edgebench.runner.rundir import (
    RunFolder,
    read_manifest,
    read_samples,
    resume_conflict,
    resume_point,
    settings_record,
)
from edgebench.runner.samples import arm_key_of, build_sample, is_worker_failure
from edgebench.runner.spec import ModelUnderTest, RunSettings
from edgebench.runner.summary import summarize
from edgebench.runner.worker import BackendWorker, WorkerDied, WorkerError, WorkerTimeout
from edgebench.tasks.base import Example, Task

__all__ = [
    "ModelUnderTest",
    "RunInterrupted",
    "RunResult",
    "RunSettings",
    "build_sample",
    "compile_schemas",
    "execute",
]

WorkerFactory = Callable[[str], Worker]  # constraint mode -> a fresh worker (tests)

# Modes where edgebench's keyword guard can enforce what the grammar engine reads past.
SCHEMA_GUARDED_MODES = ("gbnf", "outlines", "mask")


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped the run after its folder was written."""

    def __init__(self, run_dir: Path, n_samples: int) -> None:
        super().__init__(f"interrupted; {n_samples} completed examples kept in {run_dir}")
        self.run_dir = run_dir
        self.n_samples = n_samples


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    # Examples the worker never answered (crashed or timed out): --resume runs them again.
    worker_failures: int = 0


class Progress(Protocol):
    def start(self, total: int, description: str) -> None: ...
    def advance(self, sample: dict[str, Any]) -> None: ...
    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...


def _remote_user_error(exc: WorkerError) -> UserError | None:
    return UserError(str(exc)) if exc.remote_type == "UserError" else None


def initial_manifest(
    run_dir: Path,
    settings: RunSettings,
    model: ModelUnderTest,
    task: Task,
    dataset_info: dict[str, Any],
) -> dict[str, Any]:
    """What is known before the model loads; the run adds decoding, load and memory."""
    return {
        "run_id": run_dir.name,
        "status": "running",
        "started_at": mf.utc_now(),
        "command": sys.argv,
        "settings": settings_record(settings),
        "model": {
            "label": model.label,
            "path": str(model.path),
            "sha256": model.sha256,
            "size_bytes": model.size_bytes,
            "backend": model.backend,
            "prompt_format": model.prompt_format.describe(),
            **model.details,
        },
        "task": {"name": task.name, "prompt_template": task.prompt_template},
        "dataset": dataset_info,
        "device": mf.device_info(settings.threads),
        "packages": mf.package_versions(),
        "git": mf.git_commit(),
        "arms": {},
    }


def execute(
    settings: RunSettings,
    model: ModelUnderTest,
    task: Task,
    dataset: list[Example],
    dataset_info: dict[str, Any],
    *,
    worker_factory: WorkerFactory | None = None,
    progress: Progress | None = None,
    resume: bool = False,
) -> RunResult:
    """Run the first `settings.limit` examples of `dataset` through `model`, once per
    constraint mode (each in its own worker), and write the run folder. The whole
    dataset sizes the automatic token budget.

    With `resume`, `settings.out` is an earlier run of the same model, dataset and
    settings: its complete samples are kept and only the missing examples run."""
    examples = dataset[: settings.limit] if settings.limit else dataset
    if not examples:
        raise UserError("the dataset has no examples to run")
    families = select_families(task, settings.metrics, settings.metric_params)
    # Rendering runs the model's chat template: a failure here leaves no folder behind.
    prompts = model.prompt_format.render_many([task.build_prompt(ex) for ex in examples])
    if resume:
        if settings.out is None:
            raise UserError("--resume needs the run folder to continue")
        folder = RunFolder.reopen(settings.out)
    else:
        folder = RunFolder.create(settings, model.label, mf.utc_now())
    try:
        run = _Run(
            folder,
            settings,
            model,
            task,
            dataset,
            examples,
            prompts,
            worker_factory=worker_factory,
            progress=progress,
            families=families,
        )
        try:
            run.begin(dataset_info, resume)
            first_worker, n_ctx, jobs = run.plan()
        except OSError as exc:
            raise UserError(f"could not write to {folder.path}: {exc.strerror or exc}") from None
        failure = run.run_arms(first_worker, n_ctx, jobs)
        return run.finish(failure)
    finally:
        folder.release()


class _Run:
    """The state of one run while it executes (see the module docstring)."""

    def __init__(
        self,
        folder: RunFolder,
        settings: RunSettings,
        model: ModelUnderTest,
        task: Task,
        dataset: list[Example],
        examples: list[Example],
        prompts: list[str],
        *,
        worker_factory: WorkerFactory | None = None,
        progress: Progress | None = None,
        families: Sequence[Family] = (),
    ) -> None:
        self.folder = folder
        self.families = families
        self.settings = settings
        self.model = model
        self.task = task
        self.dataset = dataset
        self.examples = examples
        self.prompts = prompts
        self.worker_factory = worker_factory
        self.progress = progress
        self.stop = tuple(dict.fromkeys(model.prompt_format.stop + model.stop))
        self.arms = [ArmSpec(model, mode) for mode in settings.constraints]
        self.manifest: dict[str, Any] = {}
        self.samples: list[dict[str, Any]] = []
        self.resumed = False
        self.t_start = now()

    def make_worker(self, spec: ArmSpec) -> Worker:
        if self.worker_factory is not None:
            return self.worker_factory(spec.mode)
        backend, options = backend_for(spec.model.backend, spec.mode)
        if spec.mode in SCHEMA_GUARDED_MODES:
            options = {**options, "guard": self.settings.guard}
        model_options = {"model_path": str(spec.model.path), "n_threads": self.settings.threads}
        return BackendWorker(backend, {**model_options, **options})

    def note(self, message: str) -> None:
        if self.progress is not None:
            self.progress.note(message)

    # -- begin -----------------------------------------------------------------------
    def begin(self, dataset_info: dict[str, Any], resume: bool) -> None:
        if not resume:
            self.manifest = initial_manifest(
                self.folder.path, self.settings, self.model, self.task, dataset_info
            )
            self.manifest["families"] = describe_families(self.families, self.task)
            self.folder.write_manifest(self.manifest)
            return
        run_dir = self.folder.path
        manifest = read_manifest(run_dir)
        conflict = resume_conflict(
            manifest,
            self.settings,
            self.model,
            self.task.name,
            self.task.prompt_template,
            dataset_info,
        )
        if conflict is not None:
            raise UserError(f"cannot resume {run_dir}: {conflict}")
        point = resume_point(run_dir)
        self.samples = point.samples
        self.resumed = True
        manifest.setdefault("resumes", []).append(
            {
                "at": mf.utc_now(),
                "command": sys.argv,
                "previous_status": manifest.get("status"),
                "samples_kept": len(point.samples),
                "torn_line_dropped": point.torn_line,
                "worker_failures_retried": point.retried,
                "duplicates_dropped": point.duplicates,
                "stale_lock": self.folder.lock.stale,
                "settings": settings_record(self.settings),
            }
        )
        manifest["status"] = "running"
        manifest.pop("error", None)
        manifest.setdefault("arms", {})
        self.manifest = manifest
        self.folder.write_manifest(manifest)

    # -- plan ------------------------------------------------------------------------
    def plan(self) -> tuple[Worker, int, list[ExampleJob]]:
        """Token counts, budget, context size and the memory check, with the first
        arm's worker (which the first arm then keeps)."""
        worker = self.make_worker(self.arms[0])
        try:
            n_ctx, jobs = self._plan_with(worker)
        except BaseException as exc:
            worker.close()
            self._stop_before_arms(exc)
            raise
        return worker, n_ctx, jobs

    def _plan_with(self, worker: Worker) -> tuple[int, list[ExampleJob]]:
        counts = worker.count_tokens(self.prompts + [reference_text(ex) for ex in self.dataset])
        prompt_counts, reference_counts = counts[: len(self.prompts)], counts[len(self.prompts) :]
        budget = plan_budget(self.settings.max_tokens, self.dataset, reference_counts)
        decoding = {
            "strategy": "greedy",
            **budget.describe(),
            "stop": list(self.stop),
            "stop_applies_to": "none (grammars end the JSON themselves)",
            "constraints": list(self.settings.constraints),
            "keyword_guard": self.settings.guard,
        }
        budgets = [budget.for_example(ex) for ex in self.examples]
        context = plan_context(
            self.examples,
            prompt_counts,
            budgets,
            n_ctx=self.settings.n_ctx,
            max_context=self.settings.max_context,
            n_ctx_train=self.model.n_ctx_train,
        )
        n_ctx = context.n_ctx
        decoding["skipped_examples"] = len(context.skipped)
        stored = self.manifest.get("decoding")
        if self.resumed and stored is not None and stored != _json(decoding):
            raise UserError(
                f"cannot resume {self.folder.path}: the decoding plan differs (token budget "
                "or stop strings; was the tokenizer changed?)"
            )
        self.manifest["decoding"] = decoding
        estimate = estimate_memory(self.model, n_ctx, available_memory_bytes())
        self.manifest["memory_check"] = {
            **estimate.to_dict(),
            "enforced": self.settings.check_memory,
        }
        if self.settings.check_memory:
            check_memory(self.model, estimate)
        jobs = [
            ExampleJob(i, ex, prompt, budget, context.skipped.get(i))
            for i, (ex, prompt, budget) in enumerate(
                zip(self.examples, self.prompts, budgets, strict=True)
            )
        ]
        return n_ctx, jobs

    def _stop_before_arms(self, exc: BaseException) -> None:
        """Record why the run ended before its first arm, and turn worker failures into
        one-line errors."""
        self.manifest.update(status=status_of(exc), finished_at=mf.utc_now())
        if not isinstance(exc, KeyboardInterrupt):
            self.manifest["error"] = str(exc) or type(exc).__name__
        self.folder.write_manifest(self.manifest)
        if isinstance(exc, WorkerError):
            raise _remote_user_error(exc) or UserError(f"the model worker failed: {exc}") from None
        if isinstance(exc, WorkerDied):
            raise UserError(f"{exc} ({self.model.label})") from None

    # -- arms ------------------------------------------------------------------------
    def run_arms(
        self, first_worker: Worker, n_ctx: int, jobs: list[ExampleJob]
    ) -> BaseException | None:
        """Every arm in turn; a failed arm costs only itself, except Ctrl-C and disk
        errors, which stop the run. Returns the first failure."""
        failure: BaseException | None = None
        done: dict[str, set[Any]] = {}
        for sample in self.samples:
            done.setdefault(arm_key_of(sample), set()).add(sample.get("id"))
        worker: Worker | None = first_worker
        if self.resumed:  # the complete records only, so appends never follow a torn line
            try:
                rewrite_jsonl(self.folder.samples_path, self.samples)
            except OSError as exc:
                first_worker.close()
                return exc
        with JsonlAppender(self.folder.samples_path) as log:

            def on_sample(sample: dict[str, Any]) -> None:
                log.append(sample)
                self.samples.append(sample)
                if self.progress is not None:
                    self.progress.advance(sample)

            for spec in self.arms:
                pending = [j for j in jobs if j.example.id not in done.get(spec.key, set())]
                record = self.manifest["arms"].setdefault(
                    spec.key, {"constraint": spec.mode, "status": "running"}
                )
                arm_failure = self._run_arm(spec, record, worker, n_ctx, pending, on_sample)
                worker = None  # the first worker belongs to the first arm only
                failure = failure or arm_failure
                if isinstance(arm_failure, KeyboardInterrupt | OSError):
                    failure = arm_failure
                    break
        return failure

    def _run_arm(
        self,
        spec: ArmSpec,
        record: dict[str, Any],
        worker: Worker | None,
        n_ctx: int,
        pending: list[ExampleJob],
        on_sample: Callable[[dict[str, Any]], None],
    ) -> BaseException | None:
        if not pending:  # every example of this arm is already recorded
            if worker is not None:
                worker.close()
            record["status"] = "completed"
            record.pop("error", None)
            return None
        record["status"] = "running"
        t_arm = now()
        if self.progress is not None:
            done = len(self.examples) - len(pending)
            resumed = f" · resumed, {done} done" if done else ""
            self.progress.start(len(pending), f"{self.task.name} · {spec.describe()}{resumed}")
        arm = Arm(
            spec,
            task=self.task,
            settings=self.settings,
            n_ctx=n_ctx,
            stop=self.stop,
            make_worker=lambda: self.make_worker(spec),
            record=record,
            on_sample=on_sample,
            note=self.note,
            worker=worker,
            families=self.families,
        )
        failure: BaseException | None = None
        try:
            arm.run(pending)
        except WorkerError as exc:
            failure = _remote_user_error(exc) or exc
        except (ArmGaveUp, WorkerDied, WorkerTimeout, UserError, KeyboardInterrupt, OSError) as exc:
            failure = exc
        finally:
            if self.progress is not None:
                self.progress.stop()
        device = self.manifest["device"]
        if device.get("runtime") is None:  # the first arm that loaded a model
            device["runtime"] = mf.runtime_build(record.get("runtime"))
        record["wall_s"] = (record.get("wall_s") or 0.0) + now() - t_arm
        record["status"] = status_of(failure)
        if failure is None:
            record.pop("error", None)
        else:
            record["error"] = str(failure) or type(failure).__name__
            if not isinstance(failure, KeyboardInterrupt):
                self.note(record["error"])
        try:
            self.folder.write_manifest(self.manifest)
        except OSError as exc:  # a full disk stops the run; Ctrl-C still counts as such
            return failure if isinstance(failure, KeyboardInterrupt) else exc
        return failure

    # -- finish ----------------------------------------------------------------------
    def finish(self, failure: BaseException | None) -> RunResult:
        """Write the manifest and the summary; raise what stopped the run, if anything."""
        run_dir = self.folder.path
        manifest = self.manifest
        manifest["wall_s"] = (manifest.get("wall_s") or 0.0) + now() - self.t_start
        manifest["finished_at"] = mf.utc_now()
        manifest["status"] = status_of(failure)
        if failure is None:
            manifest.pop("error", None)
        else:
            manifest["error"] = str(failure) or type(failure).__name__
        if isinstance(failure, KeyboardInterrupt) and not self.resumed:
            # Ctrl-C can land between writing a sample and counting it: the file decides.
            self.samples = read_samples(run_dir)[0]
        if self.resumed:  # retried examples were appended at the end: restore run order
            order = {spec.key: n for n, spec in enumerate(self.arms)}
            self.samples.sort(key=lambda s: (order.get(arm_key_of(s), 0), s.get("index", 0)))
        path = self.folder.samples_path
        try:
            if self.resumed:
                rewrite_jsonl(path, self.samples)
            path = self.folder.manifest_path
            self.folder.write_manifest(manifest)
            summary = summarize(manifest, self.samples)
            path = self.folder.summary_path
            write_json_atomic(path, summary)
        except OSError as exc:
            raise UserError(
                f"could not write {path.name} in {run_dir}: {exc.strerror or exc}; the "
                f"previous {path.name} is unchanged and samples.jsonl holds "
                f"{len(self.samples)} examples; free space, then continue with "
                f"`edgebench run --resume {run_dir}`"
            ) from None
        if isinstance(failure, KeyboardInterrupt):
            raise RunInterrupted(run_dir, len(self.samples)) from None
        if isinstance(failure, OSError):
            raise UserError(
                f"could not write to {run_dir}: {failure.strerror or failure}; "
                f"{len(self.samples)} completed examples are safe in samples.jsonl; "
                f"free space, then continue with `edgebench run --resume {run_dir}`"
            )
        if failure is not None:
            if isinstance(failure, UserError):
                raise failure
            raise UserError(f"{failure}; {len(self.samples)} completed examples kept in {run_dir}")
        lost = sum(1 for s in self.samples if is_worker_failure(s))
        return RunResult(run_dir=run_dir, summary=summary, worker_failures=lost)


def _json(value: Any) -> Any:
    """What `value` reads back as from the manifest (tuples become lists)."""
    return json.loads(json.dumps(value))


def status_of(failure: BaseException | None) -> str:
    """A run's (or a worker's) status after `failure` (None: all went well)."""
    if failure is None:
        return "completed"
    if isinstance(failure, KeyboardInterrupt):
        return "interrupted"
    if isinstance(failure, ArmGaveUp):
        return "crashed" if failure.crashed else "failed"
    if isinstance(failure, WorkerDied | WorkerTimeout):
        return "crashed"
    return "failed"
