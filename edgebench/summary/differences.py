"""Paired differences between arms on the same examples: each constraint mode against the
same model's first mode, and each model against the first model in the same mode, for
every rate of the task's family (summary.json `differences`)."""

from __future__ import annotations

from collections.abc import Sequence

from edgebench.metrics.base import Family
from edgebench.runfolder.records import Manifest, PairedDifference, SampleRecord
from edgebench.summary.uncertainty import paired_difference

ArmKey = tuple[str, str]  # (model, constraint)


def _pairs(manifest: Manifest) -> list[tuple[ArmKey, ArmKey]]:
    arms = [(a.model, a.constraint) for a in manifest.arms if a.status != "skipped"]
    models = list(dict.fromkeys(m for m, _ in arms))
    modes = list(dict.fromkeys(c for _, c in arms))
    pairs = []
    for model in models:  # each mode minus the model's first mode
        own = [c for m, c in arms if m == model]
        pairs += [((model, own[0]), (model, c)) for c in own[1:]]
    for mode in modes:  # each model minus the first model, same mode
        own = [m for m, c in arms if c == mode]
        pairs += [((own[0], mode), (m, mode)) for m in own[1:]]
    return pairs


def _scores(samples: Sequence[SampleRecord], family: str) -> dict[str, dict] | None:
    """Example id -> the family's scores; None when an example has several records
    (sampled draws): no single pairing."""
    by_id: dict[str, dict] = {}
    for s in samples:
        if s.skipped:
            continue
        if s.id in by_id:
            return None
        by_id[s.id] = (s.scores or {}).get(family, {})
    return by_id


def paired_differences(
    manifest: Manifest, samples: Sequence[SampleRecord], families: Sequence[Family]
) -> list[PairedDifference]:
    family = next((f for f in families if f.name == manifest.task_family), None)
    if family is None:
        return []
    by_arm: dict[ArmKey, list[SampleRecord]] = {}
    for s in samples:
        by_arm.setdefault((s.model, s.constraint), []).append(s)
    result = []
    for base, other in _pairs(manifest):
        a = _scores(by_arm.get(base, []), family.name)
        b = _scores(by_arm.get(other, []), family.name)
        if a is None or b is None:
            continue
        ids = [i for i in a if i in b]
        for metric, (num, den) in family.interval_inputs().items():
            if den is not None:  # a ratio of sums has no per-example difference
                continue
            found = paired_difference(
                [float(a[i].get(num, 0.0)) for i in ids], [float(b[i].get(num, 0.0)) for i in ids]
            )
            if found is None:
                continue
            result.append(
                PairedDifference(
                    family=family.name,
                    metric=metric,
                    base_model=base[0],
                    base_constraint=base[1],
                    other_model=other[0],
                    other_constraint=other[1],
                    n=len(ids),
                    difference=found[0],
                    ci95=found[1],
                )
            )
    return result
