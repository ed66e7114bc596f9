"""What a consistency run adds to its summary: for every temperature and prompt, STED
between every pair of the N sampled outputs, and the consistency score mean(s) *
exp(-k * sigma / 0.5) (STED and Consistency Scoring, arXiv:2512.23712, section 3.7) in
the hybrid, structural-only and semantic-only variants."""

from __future__ import annotations

import dataclasses
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from edgebench.metrics.base import Family
from edgebench.runfolder.records import (
    ArmSummary,
    ConsistencySummary,
    FamilySummary,
    Manifest,
    PromptConsistency,
    SampleRecord,
    TemperatureConsistency,
)
from edgebench.scoring.sted import MODES, StedParams, consistency_score, pairwise_similarities
from edgebench.summary.arms import arm_summary
from edgebench.summary.uncertainty import bootstrap_ci

# summary names of the three STED variants
VARIANT_KEYS = {
    "hybrid": "consistency",
    "structural": "consistency_structural",
    "semantic": "consistency_semantic",
}


# The family a consistency run's arms add at each temperature: its figure -> the
# PromptConsistency field it is the mean of over prompts.
FAMILY = "consistency"
FAMILY_FIGURES = {
    "score": "consistency",
    "structural": "consistency_structural",
    "semantic": "consistency_semantic",
    "sted_mean": "sted_mean",
}


def temperature_key(temperature: float) -> str:
    return f"{temperature:g}"


def consistency_family(
    prompts: dict[str, PromptConsistency], parameters: dict[str, Any]
) -> FamilySummary:
    """The consistency figures of one temperature as a metric family: each the mean over
    prompts, with its 95% bootstrap interval over prompts (a prompt is the unit: its N
    generations are not independent)."""
    overall: dict[str, Any] = {"n": len(prompts)}
    ci95: dict[str, list[float] | None] = {}
    for figure, field in FAMILY_FIGURES.items():
        values = [v for p in prompts.values() if (v := getattr(p, field)) is not None]
        overall[figure] = _mean(list(values))
        ci95[figure] = bootstrap_ci(values)
    return FamilySummary(
        role="extra",
        higher_is_better=dict.fromkeys(FAMILY_FIGURES, True),
        parameters=parameters,
        overall=overall,
        groups={},
        ci95=ci95,
    )


def temperature_arms(
    manifest: Manifest,
    samples: list[SampleRecord],
    by_prompt: dict[str, dict[str, PromptConsistency]],
    families: Sequence[Family],
    parameters: dict[str, Any],
) -> list[ArmSummary]:
    """Every arm at each temperature, summarised as a greedy run's arm is (over that
    temperature's generations, skipped ones counted), with the `consistency` family
    added: so `compare`, the card and the report show a consistency run through the same
    path as any run."""
    result = []
    temperatures = manifest.consistency.temperatures if manifest.consistency else []
    for arm in manifest.arms:
        for temperature in temperatures:  # as the plan has it: what samples carry
            drawn = [
                s
                for s in samples
                if (s.model, s.constraint) == (arm.model, arm.constraint)
                and s.sampling is not None
                and s.sampling.temperature == temperature
            ]
            summary = arm_summary(manifest, arm, drawn, families)
            prompts = by_prompt.get(temperature_key(temperature), {})
            extra = {FAMILY: consistency_family(prompts, parameters)} if summary.families else {}
            result.append(
                dataclasses.replace(
                    summary, temperature=temperature, families={**summary.families, **extra}
                )
            )
    return result


def prompt_consistency(outputs: list[tuple[bool, Any]], params: StedParams) -> PromptConsistency:
    """The N outputs of one prompt at one temperature: pairwise STED and the consistency
    score in every variant."""
    scores: dict[str, float | None] = {}
    mean: float | None = None
    std = 0.0
    for variant in MODES:
        sims = pairwise_similarities(outputs, params, variant)
        scores[VARIANT_KEYS[variant]] = consistency_score(sims, params.steepness)
        if variant == "hybrid":
            mean = statistics.fmean(sims) if sims else None
            std = statistics.pstdev(sims) if len(sims) >= 2 else 0.0
    return PromptConsistency(
        n=len(outputs),
        valid_json=sum(ok for ok, _ in outputs),
        consistency=scores["consistency"],
        consistency_structural=scores["consistency_structural"],
        consistency_semantic=scores["consistency_semantic"],
        sted_mean=mean,
        sted_std=std,
    )


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def summarize_consistency(
    manifest: Manifest, samples: list[SampleRecord], families: Sequence[Family]
) -> ConsistencySummary | None:
    plan = manifest.consistency
    if plan is None:
        return None
    params = StedParams(**plan.sted_parameters)
    task = next(f for f in families if f.name == manifest.task_family)
    grouped: dict[str, dict[str, list[SampleRecord]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        # Generations nothing answered (skipped, or lost with a crashed or hung worker:
        # `--resume` runs those again) are not the model's answers to compare.
        if sample.sampling is not None and not sample.skipped and not sample.worker_failure:
            grouped[temperature_key(sample.sampling.temperature)][sample.id].append(sample)
    by_temperature: dict[str, TemperatureConsistency] = {}
    by_prompt: dict[str, dict[str, PromptConsistency]] = {}
    for temperature in plan.temperatures:
        key = temperature_key(temperature)
        prompts = {
            example_id: prompt_consistency(
                [(s.parse is not None and s.parse.ok, s.parsed) for s in group], params
            )
            for example_id, group in grouped[key].items()
        }
        generations = [s for group in grouped[key].values() for s in group]

        def mean_of(name: str, prompts: dict[str, PromptConsistency] = prompts) -> float | None:
            return _mean([getattr(p, name) for p in prompts.values()])

        by_temperature[key] = TemperatureConsistency(
            n_prompts=len(prompts),
            n_generations=len(generations),
            consistency=mean_of("consistency"),
            consistency_structural=mean_of("consistency_structural"),
            consistency_semantic=mean_of("consistency_semantic"),
            sted_mean=mean_of("sted_mean"),
            sted_std=mean_of("sted_std"),
            task_metrics=task.aggregate([(s.scores or {}).get(task.name, {}) for s in generations]),
        )
        by_prompt[key] = prompts
    parameters = dataclasses.asdict(params)
    return ConsistencySummary(
        samples_per_prompt=plan.samples_per_prompt,
        temperatures=plan.temperatures,
        seeds=plan.seeds,
        parameters=parameters,
        higher_is_better=dict.fromkeys((*VARIANT_KEYS.values(), "sted_mean"), True),
        by_temperature=by_temperature,
        by_prompt=by_prompt,
        arms=temperature_arms(manifest, samples, by_prompt, families, parameters),
    )
