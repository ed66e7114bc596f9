"""summary.json: derived from a run folder's manifest and samples, never kept by hand.

The summariser is chosen by the run's kind (`SUMMARIZERS`): every kind has the arms'
figures; a consistency run adds its STED comparison. `load_run` reads a folder back with
its summary derived again, so a crashed or older run reads on today's definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from edgebench.metrics.base import Family
from edgebench.metrics.score import families_of
from edgebench.runfolder.read import read_run
from edgebench.runfolder.records import (
    SCHEMA_VERSION,
    ArmSummary,
    BootstrapRecord,
    ConsistencySummary,
    Manifest,
    SampleRecord,
    Summary,
)
from edgebench.summary import uncertainty
from edgebench.summary.arms import summarize_arms
from edgebench.summary.consistency import summarize_consistency
from edgebench.summary.differences import paired_differences

# What a run kind adds to the arms' figures (None: nothing).
Section = Callable[[Manifest, list[SampleRecord], Sequence[Family]], ConsistencySummary | None]
SUMMARIZERS: dict[str, Section] = {
    "run": lambda manifest, samples, families: None,
    "consistency": summarize_consistency,
}


def summarize(manifest: Manifest, samples: list[SampleRecord]) -> Summary:
    families = families_of(manifest.families)
    return Summary(
        schema_version=SCHEMA_VERSION,
        kind=manifest.kind,
        run_id=manifest.run_id,
        task=manifest.task.name,
        task_family=manifest.task_family,
        status=manifest.status,
        models=[m.label for m in manifest.models],
        constraints=list(manifest.settings.constraints),
        arms=summarize_arms(manifest, samples, families),
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
    )


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

    @property
    def run_id(self) -> str:
        return self.manifest.run_id


def load_run(run_dir: Path) -> LoadedRun:
    records = read_run(run_dir)
    return LoadedRun(
        run_dir, records.manifest, records.samples, summarize(records.manifest, records.samples)
    )
