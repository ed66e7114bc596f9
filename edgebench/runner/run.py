"""One benchmark run: the run folder, the plan every arm shares, the arms one after
another, and the summary.

    execute()
      folder    RunFolder.create (new) or .reopen (--resume): locked for the whole run
      begin     manifest.json (new), or the stored one checked against what would run now
                and samples.jsonl rewritten without a torn line or worker failures
      plan      per model: count tokens in a worker, token budget per schema, n_ctx
                (examples that do not fit --max-context are marked skipped), memory
                check (every model before any arm runs)
      arms      per (model, constraint mode) an `Arm` (runner/arm.py): a worker, then
                per example generate -> score -> append to samples.jsonl (fsynced);
                an example the worker dies on is recorded and a fresh worker goes on
      finish    manifest.json and summary.json, each written atomically

Several models (`--model a,b`) share one folder: their arms run one after another, keyed
"<model> | <mode>" (`ArmSpec.key`), and each sample names its model. A mode a model's
runtime cannot apply (gbnf on ONNX) is recorded as a skipped arm with the reason.

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

from edgebench.backends import UnsupportedConstraint, backend_for
from edgebench.backends.base import now
from edgebench.backends.worker import BackendWorker
from edgebench.errors import UserError
from edgebench.io import JsonlAppender, rewrite_jsonl, write_json_atomic
from edgebench.isolation import WorkerDied, WorkerError, WorkerTimeout
from edgebench.metrics import Family, select_families
from edgebench.metrics.apply import describe_families
from edgebench.runfolder.folder import RunFolder
from edgebench.runfolder.read import read_manifest, read_samples
from edgebench.runner.arm import (
    Arm,
    ArmGaveUp,
    ArmSpec,
    ExampleJob,
    Worker,
    compile_schemas,
)
from edgebench.runner.budget import plan_budget, plan_context, reference_text
from edgebench.runner.interrupt import StopRequest
from edgebench.runner.preflight import available_memory_bytes, check_memory, estimate_memory
from edgebench.runner.resume import resume_conflict, resume_point, settings_record
from edgebench.runner.samples import arm_key_of, build_sample, is_worker_failure
from edgebench.runner.spec import ModelUnderTest, RunSettings
from edgebench.runner.summary import summarize
from edgebench.system import versions as mf
from edgebench.system.device import device_info
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
# (model, constraint mode) -> a fresh worker (tests of multi-model runs)
ModelWorkerFactory = Callable[[ModelUnderTest, str], Worker]

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


def model_record(model: ModelUnderTest, prompt_format: bool = True) -> dict[str, Any]:
    """A model as the manifest lists it (`model`, and each of `models` in a multi-model run);
    without its prompt format for `edgebench bench`, which sends no prompt."""
    shown = {"prompt_format": model.prompt_format.describe()} if prompt_format else {}
    return {
        "label": model.label,
        "path": str(model.path),
        "sha256": model.sha256,
        "size_bytes": model.size_bytes,
        "backend": model.backend,
        **shown,
        **model.details,
    }


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
        "model": model_record(model),
        "task": {"name": task.name, "prompt_template": task.prompt_template},
        "dataset": dataset_info,
        "device": device_info(settings.threads),
        "packages": mf.package_versions(),
        "git": mf.git_commit(),
        "arms": {},
    }


def execute(
    settings: RunSettings,
    model: ModelUnderTest | list[ModelUnderTest],
    task: Task,
    dataset: list[Example],
    dataset_info: dict[str, Any],
    *,
    worker_factory: WorkerFactory | None = None,
    model_worker_factory: ModelWorkerFactory | None = None,
    progress: Progress | None = None,
    resume: bool = False,
) -> RunResult:
    """Run the first `settings.limit` examples of `dataset` through each model, once per
    constraint mode (each model and mode in its own worker, one after another), and write
    one run folder. The whole dataset sizes the automatic token budget.

    With `resume`, `settings.out` is an earlier run of the same models, dataset and
    settings: its complete samples are kept and only the missing examples run."""
    models = model if isinstance(model, list) else [model]
    labels = [m.label for m in models]
    if not models:
        raise UserError("--model: no model to run")
    if len(set(labels)) != len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise UserError(f"--model: {twice!r} is named twice")
    examples = dataset[: settings.limit] if settings.limit else dataset
    if not examples:
        raise UserError("the dataset has no examples to run")
    families = select_families(task, settings.metrics, settings.metric_params)
    # Rendering runs each model's chat template: a failure here leaves no folder behind.
    built = [task.build_prompt(ex) for ex in examples]
    prompts = [m.prompt_format.render_many(built) for m in models]
    if resume:
        if settings.out is None:
            raise UserError("--resume needs the run folder to continue")
        folder = RunFolder.reopen(settings.out)
    else:
        folder = RunFolder.create(settings.out, " + ".join(labels), settings.task, mf.utc_now())
    try:
        run = _Run(
            folder,
            settings,
            models,
            task,
            dataset,
            examples,
            prompts,
            worker_factory=worker_factory,
            model_worker_factory=model_worker_factory,
            progress=progress,
            families=families,
        )
        try:
            run.begin(dataset_info, resume)
            first_worker, plans = run.plan()
        except OSError as exc:
            raise UserError(f"could not write to {folder.path}: {exc.strerror or exc}") from None
        with run.stop.installed():
            failure = run.run_arms(first_worker, plans)
        return run.finish(failure)
    finally:
        folder.release()


@dataclass
class _ModelPlan:
    """What every arm of one model shares: context size, stop strings, the jobs."""

    model: ModelUnderTest
    n_ctx: int
    stop: tuple[str, ...]
    jobs: list[ExampleJob]


class _Run:
    """The state of one run while it executes (see the module docstring)."""

    def __init__(
        self,
        folder: RunFolder,
        settings: RunSettings,
        models: list[ModelUnderTest],
        task: Task,
        dataset: list[Example],
        examples: list[Example],
        prompts: list[list[str]],
        *,
        worker_factory: WorkerFactory | None = None,
        model_worker_factory: ModelWorkerFactory | None = None,
        progress: Progress | None = None,
        families: Sequence[Family] = (),
    ) -> None:
        self.folder = folder
        self.families = families
        self.settings = settings
        self.models = models
        self.several = len(models) > 1
        self.task = task
        self.dataset = dataset
        self.examples = examples
        self.prompts = prompts  # per model, per example
        self.worker_factory = worker_factory
        self.model_worker_factory = model_worker_factory
        self.progress = progress
        self.stop = StopRequest()  # Ctrl-C, remembered (runner/interrupt.py)
        self.arms = [
            ArmSpec(m, mode, with_model=self.several)
            for m in models
            for mode in settings.constraints
        ]
        self.manifest: dict[str, Any] = {}
        self.samples: list[dict[str, Any]] = []
        self.resumed = False
        self.t_start = now()

    def make_worker(self, spec: ArmSpec) -> Worker:
        if self.model_worker_factory is not None:
            return self.model_worker_factory(spec.model, spec.mode)
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

    def _model_block(self, position: int) -> dict[str, Any]:
        """Where the manifest describes model `position`: `model` for a run of one model,
        `models[position]` when there are several."""
        if self.several:
            return self.manifest["models"][position]
        return self.manifest

    # -- begin -----------------------------------------------------------------------
    def begin(self, dataset_info: dict[str, Any], resume: bool) -> None:
        if not resume:
            self.manifest = initial_manifest(
                self.folder.path, self.settings, self.models[0], self.task, dataset_info
            )
            if self.several:
                self.manifest["models"] = [model_record(m) for m in self.models]
            self.manifest["families"] = describe_families(self.families, self.task)
            self.folder.write_manifest(self.manifest)
            return
        run_dir = self.folder.path
        manifest = read_manifest(run_dir)
        conflict = resume_conflict(
            manifest,
            self.settings,
            self.models,
            self.task.name,
            self.task.prompt_template,
            dataset_info,
        )
        if conflict is not None:
            raise UserError(f"cannot resume {run_dir}: {conflict}")
        point = resume_point(run_dir, with_model=self.several)
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
    def plan(self) -> tuple[Worker, list[_ModelPlan]]:
        """Token counts, budget, context size and the memory check for every model
        before any arm runs (a prompt that does not fit one model fails the run before
        the others spend an hour), each in a worker of that model's first arm. The
        first model's worker is returned for its first arm to keep."""
        plans: list[_ModelPlan] = []
        first_worker: Worker | None = None
        for position, model in enumerate(self.models):
            spec = self._first_arm(model)
            worker = self.make_worker(spec)
            try:
                plans.append(self._plan_with(worker, position))
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
        return first_worker, plans

    def _first_arm(self, model: ModelUnderTest) -> ArmSpec:
        """The model's first arm its runtime can decode; with none, a plain worker only
        to count tokens."""
        specs = [spec for spec in self.arms if spec.model is model]
        usable = (spec for spec in specs if skip_reason(spec) is None)
        return next(usable, ArmSpec(model, "none", with_model=self.several))

    def _plan_with(self, worker: Worker, position: int) -> _ModelPlan:
        model, prompts = self.models[position], self.prompts[position]
        stop = tuple(dict.fromkeys(model.prompt_format.stop + model.stop))
        counts = worker.count_tokens(prompts + [reference_text(ex) for ex in self.dataset])
        prompt_counts, reference_counts = counts[: len(prompts)], counts[len(prompts) :]
        budget = plan_budget(self.settings.max_tokens, self.dataset, reference_counts)
        decoding = {
            "strategy": "greedy",
            **budget.describe(),
            "stop": list(stop),
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
            n_ctx_train=model.n_ctx_train,
        )
        n_ctx = context.n_ctx
        decoding["skipped_examples"] = len(context.skipped)
        block = self._model_block(position)
        stored = block.get("decoding")
        if self.resumed and stored is not None and stored != _json(decoding):
            where = f" of {model.label}" if self.several else ""
            raise UserError(
                f"cannot resume {self.folder.path}: the decoding plan{where} differs (token "
                "budget or stop strings; was the tokenizer changed?)"
            )
        block["decoding"] = decoding
        if position == 0 and self.several:
            self.manifest["decoding"] = decoding  # the top level stays the first model's
        if self.several:
            block["n_ctx"] = n_ctx
        estimate = estimate_memory(model, n_ctx, available_memory_bytes())
        block["memory_check"] = {**estimate.to_dict(), "enforced": self.settings.check_memory}
        if position == 0 and self.several:
            self.manifest["memory_check"] = block["memory_check"]
        if self.settings.check_memory:
            check_memory(model, estimate)
        jobs = [
            ExampleJob(i, ex, prompt, budget, context.skipped.get(i))
            for i, (ex, prompt, budget) in enumerate(
                zip(self.examples, prompts, budgets, strict=True)
            )
        ]
        return _ModelPlan(model, n_ctx, stop, jobs)

    def _stop_before_arms(self, exc: BaseException, model: ModelUnderTest) -> None:
        """Record why the run ended before its first arm, and turn worker failures into
        one-line errors."""
        self.manifest.update(status=status_of(exc), finished_at=mf.utc_now())
        if not isinstance(exc, KeyboardInterrupt):
            self.manifest["error"] = str(exc) or type(exc).__name__
        self.folder.write_manifest(self.manifest)
        if isinstance(exc, WorkerError):
            raise _remote_user_error(exc) or UserError(f"the model worker failed: {exc}") from None
        if isinstance(exc, WorkerDied):
            raise UserError(f"{exc} ({model.label})") from None

    # -- arms ------------------------------------------------------------------------
    def run_arms(self, first_worker: Worker, plans: list[_ModelPlan]) -> BaseException | None:
        """Every arm in turn; a failed arm costs only itself, except Ctrl-C and disk
        errors, which stop the run. Returns the first failure."""
        failure: BaseException | None = None
        done: dict[str, set[Any]] = {}
        for sample in self.samples:
            done.setdefault(arm_key_of(sample, self.several), set()).add(sample.get("id"))
        plan_of = {id(plan.model): plan for plan in plans}
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
                self.stop.check()  # a Ctrl-C swallowed somewhere still ends the run here

            for spec in self.arms:
                record = self.manifest["arms"].setdefault(
                    spec.key,
                    {"constraint": spec.mode, "model": spec.model.label, "status": "running"},
                )
                reason = skip_reason(spec)
                if reason is not None:
                    record.update(status="skipped", reason=reason)
                    arm_failure = self._write_manifest_after(None)
                else:
                    plan = plan_of[id(spec.model)]
                    arm_done = done.get(spec.key, set())
                    pending = [j for j in plan.jobs if j.example.id not in arm_done]
                    if worker is not None and spec.model is not self.models[0]:
                        worker.close()  # not this model's: no arm of the first model ran
                        worker = None
                    arm_failure = self._run_arm(spec, record, worker, plan, pending, on_sample)
                    worker = None  # the first worker belongs to the first arm only
                failure = failure or arm_failure
                if isinstance(arm_failure, KeyboardInterrupt | OSError):
                    failure = arm_failure
                    break
        if worker is not None:
            worker.close()
        return failure

    def _write_manifest_after(self, failure: BaseException | None) -> BaseException | None:
        try:
            self.folder.write_manifest(self.manifest)
        except OSError as exc:  # a full disk stops the run; Ctrl-C still counts as such
            return failure if isinstance(failure, KeyboardInterrupt) else exc
        return failure

    def _run_arm(
        self,
        spec: ArmSpec,
        record: dict[str, Any],
        worker: Worker | None,
        plan: _ModelPlan,
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
            n_ctx=plan.n_ctx,
            stop=plan.stop,
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
        return self._write_manifest_after(failure)

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
            self.samples.sort(
                key=lambda s: (order.get(arm_key_of(s, self.several), 0), s.get("index", 0))
            )
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


def skip_reason(spec: ArmSpec) -> str | None:
    """Why the arm's model runtime cannot decode under its mode, or None when it can."""
    try:
        backend_for(spec.model.backend, spec.mode)
    except UnsupportedConstraint as exc:
        return str(exc)
    return None


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
