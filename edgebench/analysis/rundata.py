"""A loaded run folder as cards, pages and tables see it: its arms (one model under one
constraint mode) with their samples, and every figure an arm has, flattened, so renderers
show whatever a run holds instead of a fixed list."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.runfolder.records import ArmSummary, Figures, SampleRecord
from edgebench.summary import LoadedRun, load_run, result_arms

__all__ = [
    "ArmView",
    "LoadedRun",
    "arms",
    "flatten",
    "labels_by_run",
    "load_run",
    "numeric",
    "run_labels",
    "sample_scores",
]

# Counts next to the figures in a table row, not figures themselves.
COUNT_KEYS = ("n", "n_skipped")


@dataclass(frozen=True)
class ArmView:
    """One model under one constraint mode: a leaderboard row, a model-index entry."""

    run: LoadedRun
    result: ArmSummary
    samples: list[SampleRecord]

    @property
    def model(self) -> str:
        return self.result.model

    @property
    def constraint(self) -> str:
        """The constraint mode; a consistency run's arm says its temperature too."""
        temperature = self.result.temperature
        mode = self.result.constraint
        return mode if temperature is None else f"{mode} · T={temperature:g}"

    @property
    def key(self) -> str:
        return f"{self.run.run_id} · {self.model} · {self.constraint}"

    @property
    def metrics(self) -> dict[str, float]:
        """The task's figures, then each extra family's as `family.figure`."""
        flat = numeric(self.result.metrics)
        for name, family in self.result.families.items():
            if family.role == "extra":
                shown = {k: family.overall.get(k) for k in family.higher_is_better}
                flat.update(numeric(shown, f"{name}."))
        return flat

    @property
    def intervals(self) -> dict[str, list[float]]:
        """95% bootstrap intervals keyed like `metrics` (figures that have one)."""
        result = {}
        for name, family in self.result.families.items():
            prefix = "" if family.role == "task" else f"{name}."
            result.update({prefix + k: ci for k, ci in family.ci95.items() if ci})
        return result

    @property
    def groups(self) -> dict[str, dict[str, Figures]]:
        """The task's figures per group of examples (complexity, schema, depth ...)."""
        return self.result.groups

    @property
    def group_intervals(self) -> dict[str, dict[str, dict[str, list[float] | None]]]:
        """The 95% intervals of the task's figures per group of examples, keyed as `groups`."""
        task = self.result.task
        return task.groups_ci95 if task is not None else {}


def _of(result: ArmSummary, sample: SampleRecord) -> bool:
    """`sample` is one of the arm's: its model and mode (and temperature, consistency)."""
    drawn = sample.sampling.temperature if sample.sampling is not None else None
    return (sample.model, sample.constraint) == (result.model, result.constraint) and (
        result.temperature is None or drawn == result.temperature
    )


def arms(run: LoadedRun) -> list[ArmView]:
    """Every (model, constraint mode) of a run, in the order the run made them; a
    consistency run's at each temperature."""
    return [
        ArmView(run, result, [s for s in run.samples if _of(result, s)])
        for result in result_arms(run.summary)
    ]


def numeric(figures: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """The numbers of a block of figures; the counts `n` and `n_skipped` are not figures."""
    return {
        f"{prefix}{name}": float(value)
        for name, value in figures.items()
        if name not in COUNT_KEYS and isinstance(value, int | float) and not isinstance(value, bool)
    }


def sample_scores(sample: SampleRecord, task_family: str) -> dict[str, float]:
    """A sample's task scores, then each extra family's as `family.score`."""
    scores = sample.scores or {}
    flat = numeric(scores.get(task_family, {}))
    for name, values in scores.items():
        if name != task_family:
            flat.update(numeric(values, f"{name}."))
    return flat


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested facts (a device block with a board and temperatures, say) as `a.b` keys."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def run_labels(folders: Sequence[Path]) -> list[str]:
    """Each run folder's row label, unique: its name (not the recorded run id, which a
    copied folder keeps). Folders that share a name get as many parent folders as tell
    them apart (`a/two`, `b/two`); the same folder given twice, a count (`two (2)`)."""
    paths = [folder.resolve() for folder in folders]
    depths = [1] * len(paths)

    def label(i: int) -> str:
        return "/".join(paths[i].parts[1:][-depths[i] :]) or str(paths[i])

    while True:
        clashes: dict[str, list[int]] = {}
        for i in range(len(paths)):
            clashes.setdefault(label(i), []).append(i)
        grow = [
            i
            for group in clashes.values()
            if len({paths[j] for j in group}) > 1
            for i in group
            if depths[i] < len(paths[i].parts) - 1
        ]
        if not grow:
            break
        for i in grow:
            depths[i] += 1
    labels = [label(i) for i in range(len(paths))]
    seen: Counter[str] = Counter()
    unique = []
    for text in labels:
        seen[text] += 1
        unique.append(text if seen[text] == 1 else f"{text} ({seen[text]})")
    return unique


def labels_by_run(all_arms: Sequence[ArmView]) -> dict[int, str]:
    """Each run's unique label (run_labels of its folder), keyed by the run's identity."""
    runs = list({id(arm.run): arm.run for arm in all_arms}.values())
    return dict(zip(map(id, runs), run_labels([run.path for run in runs]), strict=True))
