"""Coverage of a schema engine (JSONSchemaBench's measure): per arm, overall and per group
of examples (subset ...), how many schemas it compiled, refused (with the reasons) or
crashed on, its compile times, and the task's schema score over the compiled examples.

Every sample of a schema mode carries its `compile_outcome`; compile times come from the
arm's compile records (one per distinct schema, named by the first example that used it,
so a schema shared by two groups is timed under the first).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from edgebench.runfolder.records import (
    ArmRecord,
    CompileRecord,
    Coverage,
    CoverageSummary,
    SampleRecord,
)
from edgebench.summary.perf import distribution

REASON_CHARS = 120


def _reason(record: CompileRecord | None, sample: SampleRecord) -> str:
    """The engine's reason in one short line (the sample's error when no record names it)."""
    text = (record.error if record is not None else None) or sample.error or "unknown"
    flat = " ".join(text.split())
    return flat if len(flat) <= REASON_CHARS else flat[: REASON_CHARS - 3] + "..."


def _coverage(
    samples: Sequence[SampleRecord],
    compiles: dict[str, CompileRecord],
    family: str | None,
    score: str | None,
) -> Coverage:
    outcomes = Counter(s.compile_outcome for s in samples)
    compiled = [s for s in samples if s.compile_outcome == "compiled"]
    refusals = Counter(
        _reason(compiles.get(s.schema_id), s) for s in samples if s.compile_outcome == "refused"
    )
    timed = {s.schema_id: compiles[s.schema_id] for s in compiled if s.schema_id in compiles}
    answered = [s for s in compiled if not s.worker_failure]
    compliant = None
    if family and score and compiled:
        passed = sum(1 for s in answered if ((s.scores or {}).get(family) or {}).get(score))
        compliant = passed / len(compiled)
    return Coverage(
        n=len(samples),
        compiled=outcomes["compiled"],
        refused=outcomes["refused"],
        crashed=outcomes["crashed"],
        compile_s=distribution([r.seconds for r in timed.values()]),
        refusals=dict(refusals.most_common()),
        lost=len(compiled) - len(answered),
        compliant_when_compiled=compliant,
    )


def coverage_summary(
    arm: ArmRecord,
    samples: Sequence[SampleRecord],
    family: str | None,
    score: str | None,
) -> CoverageSummary | None:
    """The arm's coverage; None when it has no schema engine (none, json, skipped arms).
    `family` and `score` name the task's schema score (None: the task has none)."""
    given = [s for s in samples if s.compile_outcome is not None and not s.skipped]
    if not given:
        return None
    compiles = {r.label: r for r in arm.compile}
    by_value: dict[str, dict[str, list[SampleRecord]]] = defaultdict(lambda: defaultdict(list))
    for sample in given:
        for key, value in sample.groups.items():
            by_value[key][value].append(sample)
    return CoverageSummary(
        overall=_coverage(given, compiles, family, score),
        groups={
            key: {
                value: _coverage(items, compiles, family, score)
                for value, items in sorted(values.items())
            }
            for key, values in sorted(by_value.items())
        },
        score=score,
    )
