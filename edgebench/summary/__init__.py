"""summary.json: derived from a run folder's manifest and samples, never kept by hand.

The summariser is chosen by the run's kind (`SUMMARIZERS`): every kind has the arms'
figures; a consistency run adds its STED comparison. `load_run` reads a folder back with
its summary derived again, so a crashed or older run reads on today's definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from edgebench.metrics.base import Family
from edgebench.metrics.score import families_of
from edgebench.runfolder.read import read_run
from edgebench.runfolder.records import (
    SCHEMA_VERSION,
    ArmEnergy,
    ArmSummary,
    BootstrapRecord,
    ConsistencySummary,
    Manifest,
    PowerReading,
    SampleRecord,
    Summary,
    TimelineRow,
)
from edgebench.summary import uncertainty
from edgebench.summary.arms import summarize_arms
from edgebench.summary.consistency import summarize_consistency
from edgebench.summary.differences import paired_differences
from edgebench.summary.energy import (
    arm_energy,
    arm_throttled,
    lost_readings,
    power_samples,
    throttled,
    with_losses,
)
from edgebench.system.power import PowerCurve

# What a run kind adds to the arms' figures (None: nothing).
Section = Callable[[Manifest, list[SampleRecord], Sequence[Family]], ConsistencySummary | None]
SUMMARIZERS: dict[str, Section] = {
    "run": lambda manifest, samples, families: None,
    "consistency": summarize_consistency,
}


def summarize(
    manifest: Manifest,
    samples: list[SampleRecord],
    timeline: Sequence[TimelineRow] = (),
    power_log: Sequence[PowerReading] = (),
) -> Summary:
    """The summary of a run's records; `timeline` and `power_log` (the folder's
    timeline.jsonl and power-log.jsonl) give the arms' energy and throttling."""
    families = families_of(manifest.families)
    arms = summarize_arms(manifest, samples, families)
    if manifest.power is not None:
        arms = _with_energy(manifest, arms, samples, timeline, power_log, families)
    return Summary(
        schema_version=SCHEMA_VERSION,
        kind=manifest.kind,
        run_id=manifest.run_id,
        task=manifest.task.name,
        task_family=manifest.task_family,
        status=manifest.status,
        models=[m.label for m in manifest.models],
        constraints=list(manifest.settings.constraints),
        arms=arms,
        consistency=SUMMARIZERS[manifest.kind](manifest, samples, families),
        parse=manifest.settings.parse,
        n_invalid_data=manifest.dataset.n_invalid_data,
        prompt_style=manifest.task.prompt_style,
        bootstrap=BootstrapRecord(
            method=uncertainty.METHOD,
            resamples=uncertainty.RESAMPLES,
            seed=uncertainty.SEED,
            level=uncertainty.LEVEL,
            indicative_below_n=uncertainty.INDICATIVE_N,
        ),
        differences=paired_differences(manifest, samples, families),
        throttled_during_run=throttled(timeline) if manifest.power is not None else None,
    )


def _with_energy(
    manifest: Manifest,
    arms: list[ArmSummary],
    samples: list[SampleRecord],
    timeline: Sequence[TimelineRow],
    power_log: Sequence[PowerReading],
    families: Sequence[Family],
) -> list[ArmSummary]:
    """Each arm with its energy and throttling flag (format 2.7 runs)."""
    # built once: every example of every arm is an interval on the same readings
    power = PowerCurve.of(power_samples(timeline, power_log))
    task_family = next((f for f in families if f.name == manifest.task_family), None)
    with_energy = []
    for arm in arms:
        own = [s for s in samples if (s.model, s.constraint) == (arm.model, arm.constraint)]
        lost = lost_readings(power_log or timeline, arm.key, own)
        with_energy.append(
            replace(
                arm,
                energy=_energy(arm_energy(manifest.power, own, power, task_family), lost),
                throttled_during_run=arm_throttled(timeline, arm.key, own),
            )
        )
    return with_energy


def _energy(energy: ArmEnergy | None, lost: dict[str, int]) -> ArmEnergy | None:
    return with_losses(energy, lost) if energy is not None else None


def result_arms(summary: Summary) -> list[ArmSummary]:
    """The arms a run's results are shown for: a consistency run's arm at each of its
    temperatures (`consistency.arms`), else the run's arms."""
    if summary.consistency is not None and summary.consistency.arms:
        return summary.consistency.arms
    return summary.arms


@dataclass(frozen=True)
class LoadedRun:
    """A run folder read back: its records and the summary derived from them."""

    path: Path
    manifest: Manifest
    samples: list[SampleRecord]
    summary: Summary
    timeline: list[TimelineRow] = field(default_factory=list)  # timeline.jsonl

    @property
    def run_id(self) -> str:
        return self.manifest.run_id


def load_run(run_dir: Path) -> LoadedRun:
    records = read_run(run_dir)
    summary = summarize(records.manifest, records.samples, records.timeline, records.power_log)
    return LoadedRun(run_dir, records.manifest, records.samples, summary, records.timeline)
