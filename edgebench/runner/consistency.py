"""`edgebench consistency`: how stable are a model's answers when it samples?

For every temperature and every prompt, N generations with seeds seed, seed+1, ...,
seed+N-1; then STED between every pair of the N parsed outputs, and per prompt the
consistency score mean(s) * exp(-k * sigma / 0.5) (paper 002, section 3.7), in the
hybrid, structural-only and semantic-only variants. The run folder is like a run's:
manifest.json (kind "consistency"), samples.jsonl (one record per generation, with its
temperature, sample number and seed) and summary.json, derived from the two.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from edgebench.backends import backend_for
from edgebench.backends.base import DecodeSettings, now
from edgebench.backends.worker import BackendWorker
from edgebench.constraints import request_for
from edgebench.errors import UserError
from edgebench.io import JsonlAppender, write_json_atomic
from edgebench.isolation import WorkerDied, WorkerError
from edgebench.metrics import select_families
from edgebench.metrics.apply import describe_families, task_score_names
from edgebench.runfolder.folder import RunFolder
from edgebench.runner.arm import Worker, compile_schemas
from edgebench.runner.budget import plan_budget, reference_text, size_context
from edgebench.runner.run import (
    SCHEMA_GUARDED_MODES,
    Progress,
    RunResult,
    WorkerFactory,
    initial_manifest,
)
from edgebench.runner.run import status_of as run_status
from edgebench.runner.samples import build_sample
from edgebench.runner.spec import ModelUnderTest, RunSettings
from edgebench.runner.summary import ACCURACY_METRICS, mean_scores, perf_summary
from edgebench.scoring.sted import MODES, StedParams, consistency_score, pairwise_similarities
from edgebench.system import versions as mf
from edgebench.tasks.base import Example, Task

KIND = "consistency"
SAMPLER = "temperature + dist(seed) over the whole vocabulary (no top-k, top-p or min-p)"
# summary names of the three STED variants
_VARIANT_KEYS = {
    "hybrid": "consistency",
    "structural": "consistency_structural",
    "semantic": "consistency_semantic",
}


@dataclass(frozen=True)
class ConsistencySettings:
    samples: int = 5
    temperatures: tuple[float, ...] = (0.2, 0.5, 0.8)
    seed: int = 0
    constraint: str = "none"
    sted: StedParams = field(default_factory=StedParams)

    def __post_init__(self) -> None:
        if self.samples < 2:
            raise UserError("--samples: at least 2 generations per prompt are needed to compare")
        if not self.temperatures:
            raise UserError("--temperatures: give at least one temperature")
        for t in self.temperatures:
            if not t > 0:
                raise UserError(f"--temperatures: {t} is not above 0 (0 would be greedy)")

    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(self.samples)]

    def describe(self) -> dict[str, Any]:
        return {
            "samples_per_prompt": self.samples,
            "temperatures": list(self.temperatures),
            "seeds": self.seeds(),
            "sampler": SAMPLER,
            "constraint": self.constraint,
            "sted_parameters": dataclasses.asdict(self.sted),
            "variants": {v: _VARIANT_KEYS[v] for v in MODES},
        }


def temperature_key(temperature: float) -> str:
    return f"{temperature:g}"


def execute_consistency(
    settings: RunSettings,
    consistency: ConsistencySettings,
    model: ModelUnderTest,
    task: Task,
    dataset: list[Example],
    dataset_info: dict[str, Any],
    *,
    worker_factory: WorkerFactory | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Sample every prompt N times per temperature in one worker and write the folder."""
    examples = dataset[: settings.limit] if settings.limit else dataset
    if not examples:
        raise UserError("the dataset has no examples to run")
    mode = consistency.constraint
    prompts = model.prompt_format.render_many([task.build_prompt(ex) for ex in examples])
    stop = tuple(dict.fromkeys(model.prompt_format.stop + model.stop)) if mode == "none" else ()

    if worker_factory is None:  # an unavailable mode fails here, before the folder exists
        backend, options = backend_for(model.backend, mode)
        if mode in SCHEMA_GUARDED_MODES:
            options = {**options, "guard": settings.guard}
    folder_settings = dataclasses.replace(settings, task=f"{KIND}-{settings.task}")
    folder = RunFolder.create(folder_settings.out, model.label, folder_settings.task, mf.utc_now())
    run_dir = folder.path
    try:
        manifest = initial_manifest(run_dir, settings, model, task, dataset_info)
        manifest["kind"] = KIND
        manifest["families"] = describe_families(select_families(task, ()), task)
        manifest["consistency"] = consistency.describe()
        write_json_atomic(run_dir / "manifest.json", manifest)

        # Started once the folder exists, so a bad --out leaves no worker behind.
        if worker_factory is not None:
            worker: Worker = worker_factory(mode)
        else:
            worker = BackendWorker(
                backend, {"model_path": str(model.path), "n_threads": settings.threads, **options}
            )
        t_run = now()
        samples: list[dict[str, Any]] = []
        arm: dict[str, Any] = {"constraint": mode, "status": "running"}
        failure: BaseException | None = None
        try:
            counts = worker.count_tokens(prompts + [reference_text(ex) for ex in dataset])
            budget = plan_budget(settings.max_tokens, dataset, counts[len(prompts) :])
            budgets = [budget.for_example(ex) for ex in examples]
            n_ctx = size_context(
                examples, counts[: len(prompts)], budgets, settings.n_ctx, model.n_ctx_train
            )
            manifest["decoding"] = {"strategy": "sampling", **budget.describe(), "stop": list(stop)}
            load_info, load_s = worker.load(n_ctx)
            arm.update(n_ctx=load_info.n_ctx, load_s=load_s, runtime=load_info.runtime)
            requests = [request_for(mode, ex.schema, ex.schema_id) for ex in examples]
            reports, arm["compile"] = compile_schemas(worker.compile_constraint, requests)
            refused = [r for r in reports.values() if not r.ok]
            if refused:
                raise UserError(
                    f"constraint {mode} refused schema {refused[0].label}: {refused[0].error}"
                )
            if settings.warmup:
                worker.generate(prompts[0], DecodeSettings(max_tokens=8, constraint=requests[0]))
            total = len(examples) * consistency.samples * len(consistency.temperatures)
            if progress:
                progress.start(total, f"{KIND} · {task.name} · {model.label}")
            with JsonlAppender(run_dir / "samples.jsonl") as log:
                for temperature in consistency.temperatures:
                    for index, (example, prompt, request, max_tokens) in enumerate(
                        zip(examples, prompts, requests, budgets, strict=True)
                    ):
                        report = reports[request.key] if request is not None else None
                        for number, seed in enumerate(consistency.seeds()):
                            decode = DecodeSettings(
                                max_tokens=max_tokens,
                                stop=stop,
                                constraint=request,
                                temperature=temperature,
                                seed=seed,
                            )
                            gen = worker.generate(prompt, decode)
                            sample = build_sample(
                                index, example, prompt, gen, task, mode, report, max_tokens
                            )
                            sample.update(temperature=temperature, sample=number, seed=seed)
                            log.append(sample)
                            samples.append(sample)
                            if progress:
                                progress.advance(sample)
        except WorkerError as exc:
            failure = UserError(str(exc)) if exc.remote_type == "UserError" else exc
        except (WorkerDied, UserError, KeyboardInterrupt) as exc:
            failure = exc
        finally:
            if progress:
                progress.stop()
            memory = worker.close()
        arm["memory"] = memory.to_dict() if memory else None
        arm["wall_s"] = now() - t_run
        status = run_status(failure)
        arm["status"] = status
        manifest["arms"] = {mode: arm}
        manifest.update(status=status, wall_s=arm["wall_s"], finished_at=mf.utc_now())
        if failure is not None:
            manifest["error"] = str(failure) or type(failure).__name__
        write_json_atomic(run_dir / "manifest.json", manifest)
        summary = summarize_consistency(manifest, samples)
        write_json_atomic(run_dir / "summary.json", summary)
        if failure is not None:
            if isinstance(failure, UserError | KeyboardInterrupt):
                raise failure
            raise UserError(f"{failure}; {len(samples)} completed generations kept in {run_dir}")
        return RunResult(run_dir=run_dir, summary=summary)
    finally:
        folder.release()  # the run's lock, taken when the folder was made


def prompt_consistency(outputs: list[tuple[bool, Any]], params: StedParams) -> dict[str, Any]:
    """The N outputs of one prompt at one temperature: pairwise STED and the consistency
    score in every variant."""
    result: dict[str, Any] = {"n": len(outputs), "valid_json": sum(ok for ok, _ in outputs)}
    for variant in MODES:
        sims = pairwise_similarities(outputs, params, variant)
        key = _VARIANT_KEYS[variant]
        result[key] = consistency_score(sims, params.steepness)
        if variant == "hybrid":
            result["sted_mean"] = statistics.fmean(sims) if sims else None
            result["sted_std"] = statistics.pstdev(sims) if len(sims) >= 2 else 0.0
    return result


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def summarize_consistency(
    manifest: dict[str, Any], samples: list[dict[str, Any]]
) -> dict[str, Any]:
    """summary.json of a consistency run, derived from its manifest and samples."""
    described = manifest.get("consistency") or {}
    params = StedParams(**(described.get("sted_parameters") or {}))
    outputs: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        outputs[temperature_key(sample["temperature"])][sample["id"]].append(sample)
    by_temperature: dict[str, Any] = {}
    by_prompt: dict[str, Any] = {}
    for temperature in described.get("temperatures") or []:
        key = temperature_key(temperature)
        prompts = {
            example_id: prompt_consistency(
                [(bool((s.get("parse") or {}).get("ok")), s.get("parsed")) for s in group],
                params,
            )
            for example_id, group in outputs[key].items()
        }
        generations = [s for group in outputs[key].values() for s in group]
        row: dict[str, Any] = {"n_prompts": len(prompts), "n_generations": len(generations)}
        for name in (*_VARIANT_KEYS.values(), "sted_mean", "sted_std"):
            row[name] = _mean([p[name] for p in prompts.values()])
        row["task_metrics"] = mean_scores(
            generations, task_score_names(manifest) or ACCURACY_METRICS
        )
        by_temperature[key] = row
        by_prompt[key] = prompts
    arm = next(iter((manifest.get("arms") or {}).values()), {})
    return {
        "run_id": manifest.get("run_id"),
        "kind": KIND,
        "model": (manifest.get("model") or {}).get("label"),
        "task": (manifest.get("task") or {}).get("name"),
        "status": manifest.get("status"),
        "samples_per_prompt": described.get("samples_per_prompt"),
        "temperatures": described.get("temperatures"),
        "seeds": described.get("seeds"),
        "parameters": dataclasses.asdict(params),
        "higher_is_better": dict.fromkeys((*_VARIANT_KEYS.values(), "sted_mean"), True),
        "by_temperature": by_temperature,
        "by_prompt": by_prompt,
        "perf": perf_summary(samples, arm),
    }
