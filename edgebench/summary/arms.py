"""The figures of every arm (model x constraint mode) of a run, from its records: counts,
each metric family overall and per group of examples, why outputs failed the task's
schema score, speed, memory, compile times and the keyword guard."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

from edgebench.constraints.spec import engine_mode
from edgebench.metrics.base import Family, Scored
from edgebench.runfolder.records import (
    ArmRecord,
    ArmSummary,
    FamilySummary,
    Manifest,
    SampleRecord,
)
from edgebench.runtimes import engine_of, engine_version, version_of
from edgebench.summary.coverage import coverage_summary
from edgebench.summary.perf import (
    compile_summary,
    figure_of,
    guard_summary,
    perf_summary,
    timed,
)
from edgebench.summary.uncertainty import bootstrap_ci, paired_median_ratio


def intervals(family: Family, items: Sequence[Scored]) -> dict[str, list[float] | None]:
    """Each rate's 95% bootstrap interval over these examples (a missing score is 0, as
    in `aggregate`)."""
    result = {}
    for figure, (num, den) in family.interval_inputs().items():
        nums = [float(r.scores.get(num, 0.0)) for r in items]
        dens = None if den is None else [float(r.scores.get(den, 0.0)) for r in items]
        result[figure] = bootstrap_ci(nums, dens)
    return result


def family_summary(family: Family, role: str, samples: Sequence[SampleRecord]) -> FamilySummary:
    """One family over an arm: overall and per group (complexity, schema, depth ...), plus
    the family's own breakdowns. Skipped examples are not scored: they are left out of
    every `n` and counted in `n_skipped` where there are some."""
    scored = [s for s in samples if not s.skipped]
    rows = [
        Scored(
            (s.scores or {}).get(family.name, {}), s.score_details.get(family.name, {}), s.groups
        )
        for s in scored
    ]
    by_value: dict[str, dict[str, list[Scored]]] = defaultdict(lambda: defaultdict(list))
    skipped_by_value: dict[str, Counter[str]] = defaultdict(Counter)
    for sample in samples:
        for key, value in sample.groups.items():
            by_value[key].setdefault(value, [])
            if sample.skipped:
                skipped_by_value[key][value] += 1
    for row in rows:
        for key, value in row.groups.items():
            by_value[key][value].append(row)

    def figures(items: list[Scored], skipped: int) -> dict:
        result = family.aggregate([r.scores for r in items])
        return {**result, "n_skipped": skipped} if skipped else result

    groups = {
        key: {
            value: figures(items, skipped_by_value[key][value])
            for value, items in sorted(values.items())
        }
        for key, values in sorted(by_value.items())
    }
    groups.update(family.breakdowns(rows))
    return FamilySummary(
        role=role,  # type: ignore[arg-type]
        higher_is_better=family.higher_is_better,
        parameters=family.parameters(),
        overall=figures(rows, len(samples) - len(scored)),
        groups=groups,
        ci95=intervals(family, rows),
        groups_ci95={
            key: {value: intervals(family, items) for value, items in sorted(values.items())}
            for key, values in sorted(by_value.items())
        },
    )


def noncompliance(samples: Sequence[SampleRecord], family: str, score: str) -> dict[str, int]:
    """Why outputs failed the task's schema score (EdgeJSON's schema compliance,
    DeepJSONEval's syntax): cut at max_tokens, refused schema, a worker failure, a schema
    keyword the engine does not enforce (listed in the sample's constraint_warnings), or
    other."""
    reasons: Counter[str] = Counter()
    for sample in samples:
        if sample.skipped or ((sample.scores or {}).get(family) or {}).get(score):
            continue
        if sample.hit_token_limit:
            reasons["hit_token_limit"] += 1
        elif sample.constraint_status == "unsupported":
            reasons["unsupported"] += 1
        elif sample.worker_failure:
            reasons["worker_failure"] += 1
        elif sample.constraint_warnings:
            reasons["unenforced_keyword"] += 1
        else:
            reasons["other"] += 1
    return {"total": sum(reasons.values()), **reasons}


def arm_summary(
    manifest: Manifest,
    arm: ArmRecord,
    samples: list[SampleRecord],
    families: Sequence[Family],
) -> ArmSummary:
    task = manifest.task_family
    if arm.status == "skipped":  # the runtime cannot apply the mode: no figures, not zeros
        families = ()
    task_family = next((f for f in families if f.name == task), None)
    schema_score = task_family.schema_score if task_family is not None else None
    record = manifest.model(arm.model)
    size = record.size_bytes
    engine = _engine(record.backend, arm)
    return ArmSummary(
        model=arm.model,
        constraint=arm.constraint,
        status=arm.status,
        skip_reason=arm.skip_reason,
        n_examples=len(samples),
        n_errors=sum(1 for s in samples if s.error and not s.skipped),
        n_unsupported=sum(1 for s in samples if s.constraint_status == "unsupported"),
        n_crashed=sum(1 for s in samples if s.finish_reason == "crashed"),
        n_timeout=sum(1 for s in samples if s.finish_reason == "timeout"),
        n_skipped=sum(1 for s in samples if s.skipped),
        families={
            f.name: family_summary(f, "task" if f.name == task else "extra", samples)
            for f in families
        },
        noncompliant=noncompliance(samples, task, schema_score) if schema_score else None,
        perf=perf_summary(samples, arm),
        compile=compile_summary(arm.compile, samples),
        guard=guard_summary(samples),
        model_size_mb=size / 1e6 if size else None,
        decode_ratio_to_none=None,
        decode_ratio_to_first_model=None,
        coverage=coverage_summary(arm, samples, task, schema_score),
        runtime=record.backend,
        runtime_version=version_of(arm.runtime or {}),
        engine=engine,
        engine_version=engine_version(engine, arm.runtime or {}),
    )


def _engine(runtime: str, arm: ArmRecord) -> str | None:
    """The engine that enforced the arm's mode: as the arm recorded it (format 2.10),
    else as the runtime declares it today (an older run); none for a skipped arm."""
    if arm.status == "skipped":
        return None
    return arm.engine or engine_of(runtime, engine_mode(arm.constraint))


def _ratio(value: float | None, base: float | None) -> float | None:
    return value / base if base and value is not None else None


def _decode_by_id(samples: Sequence[SampleRecord]) -> dict[str, float] | None:
    """Example id -> its decode tok/s; None when an example has several records (sampled
    draws): no single pairing."""
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        return None
    return {
        s.id: value
        for s in timed(list(samples))
        if (value := figure_of(s.timings, "decode_tok_s")) is not None
    }


def ratio_interval(
    base: Sequence[SampleRecord], other: Sequence[SampleRecord]
) -> list[float] | None:
    """The paired 95% interval of p50 decode tok/s of `other` over `base`, resampled on
    the examples both timed (None: none shared, or sampled draws)."""
    a, b = _decode_by_id(base), _decode_by_id(other)
    if a is None or b is None:
        return None
    shared = [i for i in a if i in b]
    return paired_median_ratio([a[i] for i in shared], [b[i] for i in shared])


def with_ratios(
    arms: list[ArmSummary],
    models: list[str],
    samples: dict[tuple[str, str], list[SampleRecord]] | None = None,
) -> list[ArmSummary]:
    """p50 decode tokens/s of each arm over that of the same model's `none` arm (with
    its paired interval when `samples`, by arm, are given), and over the first model's
    arm of the same mode."""
    decode = {(a.model, a.constraint): a.perf.decode_tok_s.p50 for a in arms}
    first = models[0] if models else None
    by_arm = samples or {}

    def interval(arm: ArmSummary) -> list[float] | None:
        base = (arm.model, "none")
        if arm.constraint == "none" or base not in decode or samples is None:
            return None
        return ratio_interval(by_arm.get(base, []), by_arm.get((arm.model, arm.constraint), []))

    return [
        replace(
            a,
            decode_ratio_to_none=_ratio(
                decode[a.model, a.constraint], decode.get((a.model, "none"))
            ),
            decode_ratio_to_first_model=(
                _ratio(decode[a.model, a.constraint], decode.get((first, a.constraint)))
                if len(models) > 1
                else None
            ),
            perf=replace(a.perf, decode_ratio_to_none_ci95=interval(a)),
        )
        for a in arms
    ]


def summarize_arms(
    manifest: Manifest, samples: list[SampleRecord], families: Sequence[Family]
) -> list[ArmSummary]:
    by_arm: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for sample in samples:
        by_arm[sample.model, sample.constraint].append(sample)
    arms = [
        arm_summary(manifest, arm, by_arm[arm.model, arm.constraint], families)
        for arm in manifest.arms
    ]
    return with_ratios(arms, [m.label for m in manifest.models], by_arm)
