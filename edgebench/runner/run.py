"""One benchmark run: resolve the model, load the task, decode every example in a worker,
score it, and write the run folder (manifest.json, samples.jsonl, summary.json)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from edgebench.backends import UnsupportedConstraint, backend_for
from edgebench.backends.base import FINISH_UNSUPPORTED, DecodeSettings, Generation, LoadInfo, now
from edgebench.constraints import CompileReport, ConstraintRequest, request_for
from edgebench.errors import UserError
from edgebench.io import JsonlAppender, write_json_atomic
from edgebench.prompts import PromptFormat
from edgebench.runner import manifest as mf
from edgebench.runner.budget import TokenBudget, plan_budget, reference_text, size_context
from edgebench.runner.memory import MemoryPeak
from edgebench.runner.summary import summarize
from edgebench.runner.timing import compute_timings
from edgebench.runner.worker import BackendWorker, WorkerDied, WorkerError
from edgebench.tasks.base import Example, Task

# Modes where edgebench's keyword guard can enforce what the grammar engine reads past.
SCHEMA_GUARDED_MODES = ("gbnf", "outlines", "mask")


class Worker(Protocol):
    def count_tokens(self, prompts: list[str]) -> list[int]: ...
    def load(self, n_ctx: int) -> tuple[LoadInfo, float]: ...
    def compile_constraint(self, request: ConstraintRequest) -> CompileReport: ...
    def generate(self, prompt: str, settings: DecodeSettings) -> Generation: ...
    def close(self) -> MemoryPeak: ...


WorkerFactory = Callable[[str], Worker]  # constraint mode -> a fresh worker


@dataclass(frozen=True)
class RunSettings:
    """Everything that decides what a run measures; all of it lands in the manifest."""

    model: str | None = None
    task: str = "edgejson"
    dataset: Path | None = None
    schemas: Path | None = None
    limit: int | None = None
    threads: int = 2
    max_tokens: int | None = None  # None: per schema, from the dataset's expected answers
    n_ctx: int | None = None  # None: sized to the longest prompt + its max_tokens
    out: Path | None = None
    warmup: bool = True
    constraints: tuple[str, ...] = ("none",)
    guard: bool = True  # the keyword guard in the schema modes (gbnf, outlines, mask)


@dataclass
class ModelUnderTest:
    """The model as the runner needs it: a label, a file, its identity and prompt format."""

    label: str
    path: Path
    sha256: str
    size_bytes: int
    prompt_format: PromptFormat
    n_ctx_train: int | None
    backend: str = "llama"
    details: dict[str, Any] = field(default_factory=dict)
    stop: tuple[str, ...] = ()


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]


class Progress(Protocol):
    def start(self, total: int, description: str) -> None: ...
    def advance(self, sample: dict[str, Any]) -> None: ...
    def stop(self) -> None: ...


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


def make_run_dir(settings: RunSettings, model_label: str, started: str) -> Path:
    if settings.out is not None:
        run_dir = settings.out
        if run_dir.exists() and any(run_dir.iterdir()):
            raise UserError(f"output folder {run_dir} is not empty; choose another --out")
    else:
        stamp = started.replace(":", "").replace("-", "").replace("+0000", "")[:15]
        run_dir = Path("runs") / f"{stamp}-{_slug(model_label)}-{settings.task}"
        suffix = 1
        while run_dir.exists():
            suffix += 1
            run_dir = run_dir.with_name(f"{run_dir.name.rsplit('~', 1)[0]}~{suffix}")
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def build_sample(
    index: int,
    example: Example,
    prompt: str,
    gen: Generation,
    task: Task,
    constraint: str = "none",
    compile_report: CompileReport | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    scored = task.score(gen.text, example)
    return {
        "index": index,
        "id": example.id,
        "schema_id": example.schema_id,
        "groups": example.groups,
        "constraint": constraint,
        "constraint_status": _constraint_status(constraint, compile_report),
        "constraint_warnings": list(compile_report.warnings) if compile_report else [],
        "constraint_guarded": list(compile_report.guarded) if compile_report else [],
        "prompt": prompt,
        "raw_output": gen.text,
        "expected": example.expected,
        **scored,
        "finish_reason": gen.finish_reason,
        "hit_token_limit": gen.finish_reason == "length",
        "max_tokens": max_tokens,
        "prompt_tokens": gen.prompt_tokens,
        "output_tokens": gen.output_tokens,
        "generated_tokens": gen.generated_tokens,
        "forced_tokens": gen.forced_tokens,
        "forced_prefix_tokens": gen.forced_prefix_tokens,
        "forward_passes": gen.forward_passes,
        "guard_vetoes": gen.guard_vetoes,
        "guard_dead_ends": gen.guard_dead_ends,
        "timings": compute_timings(gen).to_dict(),
        "runtime_counters": gen.runtime_counters,
        "error": gen.error,
    }


def _constraint_status(constraint: str, report: CompileReport | None) -> str:
    if constraint == "none":
        return "none"
    return "applied" if report is None or report.ok else "unsupported"


def unsupported_generation(report: CompileReport) -> Generation:
    """The record for an example whose constraint the engine could not compile: nothing
    was decoded, and the engine's message is the error."""
    t = now()
    return Generation(
        text="",
        prompt_tokens=0,
        output_tokens=0,
        generated_tokens=0,
        finish_reason=FINISH_UNSUPPORTED,
        t_start=t,
        t_first_token=None,
        t_end=t,
        error=f"unsupported by {report.mode}: {report.error}",
    )


def _warmup(worker: Worker, prompt: str, constraint: ConstraintRequest | None) -> None:
    """One short untimed generation so the first measured example pays no first-call
    costs (page faults on the mmapped weights, thread pool start, JIT compilation in a
    grammar engine)."""
    worker.generate(prompt, DecodeSettings(max_tokens=8, constraint=constraint))


def _remote_user_error(exc: WorkerError) -> UserError | None:
    return UserError(str(exc)) if exc.remote_type == "UserError" else None


def model_record(model: ModelUnderTest) -> dict[str, Any]:
    """A model as the manifest lists it (the same fields as the single `model` block)."""
    return {
        "label": model.label,
        "path": str(model.path),
        "sha256": model.sha256,
        "size_bytes": model.size_bytes,
        "backend": model.backend,
        "prompt_format": model.prompt_format.describe(),
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
        "settings": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()
        },
        "model": model_record(model),
        "task": {"name": task.name, "prompt_template": task.prompt_template},
        "dataset": dataset_info,
        "device": mf.device_info(settings.threads),
        "packages": mf.package_versions(),
        "git": mf.git_commit(),
    }


@dataclass
class _Plan:
    """What every constraint arm of a run shares: the examples, prompts and decoding."""

    examples: list[Example]
    prompts: list[str]
    budget: TokenBudget
    stop: tuple[str, ...]
    n_ctx: int


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


def _run_arm(
    mode: str,
    worker: Worker,
    plan: _Plan,
    task: Task,
    settings: RunSettings,
    arm: dict[str, Any],
    on_sample: Callable[[dict[str, Any]], None],
) -> None:
    """Load the model in `worker`, compile the constraint per schema, decode every
    example; the manifest's record for this arm is filled in as things happen."""
    load_info, load_s = worker.load(plan.n_ctx)
    arm.update(n_ctx=load_info.n_ctx, load_s=load_s, runtime=load_info.runtime)
    requests = [request_for(mode, ex.schema, ex.schema_id) for ex in plan.examples]
    reports, arm["compile"] = compile_schemas(worker.compile_constraint, requests)
    # Stop strings end free text (a closing code fence); a grammar ends the JSON itself.
    stop = plan.stop if mode == "none" else ()
    if settings.warmup:
        first = requests[0]
        usable = first is None or reports[first.key].ok
        _warmup(worker, plan.prompts[0], first if usable else None)
    for index, (example, prompt, request) in enumerate(
        zip(plan.examples, plan.prompts, requests, strict=True)
    ):
        report = reports[request.key] if request is not None else None
        max_tokens = plan.budget.for_example(example)
        if report is not None and not report.ok:
            gen = unsupported_generation(report)
        else:
            decode = DecodeSettings(max_tokens=max_tokens, stop=stop, constraint=request)
            gen = worker.generate(prompt, decode)
        on_sample(build_sample(index, example, prompt, gen, task, mode, report, max_tokens))


def _arm_key(model: ModelUnderTest, mode: str, several_models: bool) -> str:
    """Arms are keyed by mode; with several models, by model and mode."""
    return f"{model.label} | {mode}" if several_models else mode


def _plan_model(
    model: ModelUnderTest,
    worker: Worker,
    settings: RunSettings,
    task: Task,
    examples: list[Example],
    dataset: list[Example],
) -> tuple[_Plan, dict[str, Any]]:
    """Prompts, token budget and context size for one model (its own tokenizer), and
    the manifest's `decoding` block."""
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples]
    stop = tuple(dict.fromkeys(model.prompt_format.stop + model.stop))
    counts = worker.count_tokens(prompts + [reference_text(ex) for ex in dataset])
    prompt_counts, reference_counts = counts[: len(prompts)], counts[len(prompts) :]
    budget = plan_budget(settings.max_tokens, dataset, reference_counts)
    decoding = {
        "strategy": "greedy",
        **budget.describe(),
        "stop": list(stop),
        "stop_applies_to": "none (grammars end the JSON themselves)",
        "constraints": list(settings.constraints),
        "keyword_guard": settings.guard,
    }
    budgets = [budget.for_example(ex) for ex in examples]
    n_ctx = size_context(examples, prompt_counts, budgets, settings.n_ctx, model.n_ctx_train)
    return _Plan(examples, prompts, budget, stop, n_ctx), decoding


def execute(
    settings: RunSettings,
    model: ModelUnderTest | list[ModelUnderTest],
    task: Task,
    dataset: list[Example],
    dataset_info: dict[str, Any],
    *,
    worker_factory: WorkerFactory | None = None,
    model_worker_factory: Callable[[ModelUnderTest, str], Worker] | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run the first `settings.limit` examples of `dataset` through each model, once per
    constraint mode (each model and mode in a fresh worker, one after another), and
    write one run folder. The whole dataset sizes the automatic token budget.

    A mode a model's runtime cannot apply is recorded as a skipped arm with the reason."""
    models = model if isinstance(model, list) else [model]
    labels = [m.label for m in models]
    if len(set(labels)) != len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise UserError(f"--model: {twice!r} is named twice")
    several = len(models) > 1
    examples = dataset[: settings.limit] if settings.limit else dataset
    if not examples:
        raise UserError("the dataset has no examples to run")

    def make_worker(m: ModelUnderTest, mode: str) -> Worker:
        if model_worker_factory is not None:
            return model_worker_factory(m, mode)
        if worker_factory is not None:
            return worker_factory(mode)
        backend, options = backend_for(m.backend, mode)
        if mode in SCHEMA_GUARDED_MODES:
            options = {**options, "guard": settings.guard}
        return BackendWorker(
            backend, {"model_path": str(m.path), "n_threads": settings.threads, **options}
        )

    def skip_reason(m: ModelUnderTest, mode: str) -> str | None:
        try:
            backend_for(m.backend, mode)
        except UnsupportedConstraint as exc:
            return str(exc)
        return None

    run_dir = make_run_dir(settings, " + ".join(labels), mf.utc_now())
    manifest = initial_manifest(run_dir, settings, models[0], task, dataset_info)
    if several:
        manifest["models"] = [model_record(m) for m in models]
    manifest["arms"] = {}
    write_json_atomic(run_dir / "manifest.json", manifest)

    # Every model's prompts, budget and context first: a prompt that does not fit one
    # model fails the run before any model spends an hour on the others.
    plans: list[tuple[ModelUnderTest, _Plan]] = []
    workers: list[Worker] = []  # one per model, for counting tokens
    modes = list(settings.constraints)
    try:
        for m in models:
            usable = [mode for mode in modes if skip_reason(m, mode) is None]
            workers.append(make_worker(m, usable[0] if usable else "none"))
            plan, decoding = _plan_model(m, workers[-1], settings, task, examples, dataset)
            plans.append((m, plan))
            if m is models[0]:
                manifest["decoding"] = decoding
            if several:
                manifest["models"][len(plans) - 1].update(decoding=decoding, n_ctx=plan.n_ctx)
    except (WorkerError, WorkerDied, UserError) as exc:
        _close_all(workers)
        manifest.update(status="failed", error=str(exc), finished_at=mf.utc_now())
        write_json_atomic(run_dir / "manifest.json", manifest)
        if isinstance(exc, WorkerError):
            raise _remote_user_error(exc) or UserError(f"the model worker failed: {exc}") from None
        raise UserError(str(exc)) from None
    except BaseException:
        _close_all(workers)
        raise
    # The first model's counting worker decodes its first arm; the others would only
    # hold memory while the first model is measured.
    _close_all(workers[1:])

    t_run = now()
    samples: list[dict[str, Any]] = []
    failure: BaseException | None = None
    with JsonlAppender(run_dir / "samples.jsonl") as log:
        for position, (m, plan) in enumerate(plans):
            worker: Worker | None = workers[0] if position == 0 else None
            stopped = False
            for mode in modes:
                key = _arm_key(m, mode, several)
                arm: dict[str, Any] = {"constraint": mode, "model": m.label, "status": "running"}
                manifest["arms"][key] = arm
                reason = skip_reason(m, mode)
                if reason is not None:
                    arm.update(status="skipped", reason=reason)
                    write_json_atomic(run_dir / "manifest.json", manifest)
                    continue

                def on_sample(sample: dict[str, Any], label: str = m.label) -> None:
                    sample["model"] = label
                    log.append(sample)
                    samples.append(sample)
                    if progress:
                        progress.advance(sample)

                t_arm = now()
                if progress:
                    progress.start(len(examples), f"{task.name} · {m.label} · {mode}")
                arm_failure: BaseException | None = None
                try:
                    worker = worker or make_worker(m, mode)
                    _run_arm(mode, worker, plan, task, settings, arm, on_sample)
                except WorkerError as exc:
                    arm_failure = _remote_user_error(exc) or exc
                except (WorkerDied, UserError, KeyboardInterrupt) as exc:
                    arm_failure = exc
                finally:
                    if progress:
                        progress.stop()
                    memory = worker.close() if worker is not None else None
                    worker = None
                arm["memory"] = memory.to_dict() if memory else None
                arm["wall_s"] = now() - t_arm
                arm["status"] = _status(arm_failure)
                if arm_failure is not None:
                    arm["error"] = str(arm_failure) or type(arm_failure).__name__
                    failure = failure or arm_failure
                write_json_atomic(run_dir / "manifest.json", manifest)
                # A crashed engine costs its own arm only; anything else stops the run.
                if arm_failure is not None and not isinstance(arm_failure, WorkerDied):
                    stopped = True
                    break
            if worker is not None:
                worker.close()
            if stopped:
                break

    manifest["wall_s"] = now() - t_run
    manifest["finished_at"] = mf.utc_now()
    manifest["status"] = _status(failure)
    if failure is not None:
        manifest["error"] = str(failure) or type(failure).__name__
    write_json_atomic(run_dir / "manifest.json", manifest)
    summary = summarize(manifest, samples)
    write_json_atomic(run_dir / "summary.json", summary)
    if failure is not None:
        if isinstance(failure, UserError | KeyboardInterrupt):
            raise failure
        raise UserError(f"{failure}; {len(samples)} completed examples kept in {run_dir}")
    return RunResult(run_dir=run_dir, summary=summary)


def _close_all(workers: list[Worker]) -> None:
    for worker in workers:
        worker.close()


def _status(failure: BaseException | None) -> str:
    if failure is None:
        return "completed"
    if isinstance(failure, KeyboardInterrupt):
        return "interrupted"
    if isinstance(failure, WorkerDied):
        return "crashed"
    return "failed"
