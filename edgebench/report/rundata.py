"""A run folder read for reports: its manifest, samples and summary, and generic views of
them (the models in it, the constraint modes per model, every `by_*` breakdown, every
metric), so cards and pages render whatever a run holds instead of a fixed list."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.runfolder.read import read_manifest, read_samples
from edgebench.runner.summary import summarize

# `by_*` keys that are not breakdowns of examples but separate results.
_NOT_GROUPS = ("by_constraint", "by_model")


@dataclass(frozen=True)
class RunFolder:
    path: Path
    manifest: dict[str, Any]
    samples: list[dict[str, Any]]
    summary: dict[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.summary.get("run_id") or self.manifest.get("run_id") or self.path.name)


@dataclass(frozen=True)
class Arm:
    """One model under one constraint mode: a leaderboard row, a model-index entry."""

    run: RunFolder
    model: str
    constraint: str
    result: dict[str, Any]  # that mode's summary: metrics, perf, by_* groups, compile
    samples: list[dict[str, Any]]

    @property
    def key(self) -> str:
        return f"{self.run.run_id} · {self.model} · {self.constraint}"


def load_run(run_dir: Path) -> RunFolder:
    """A run folder, its summary derived again from manifest.json and samples.jsonl so
    a crashed or older run reads on the same definitions as a new one."""
    manifest = read_manifest(run_dir)
    samples, _torn_last_line = read_samples(run_dir)
    return RunFolder(run_dir, manifest, samples, summarize(manifest, samples))


def model_summaries(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each model's summary: a multi-model run keeps them under `by_model`; a run of one
    model is its own summary."""
    by_model = summary.get("by_model")
    if isinstance(by_model, dict) and by_model:
        return {str(label): result for label, result in by_model.items()}
    return {str(summary.get("model") or "model"): summary}


def model_record(manifest: dict[str, Any], label: str) -> dict[str, Any]:
    """The manifest's description of one model (path, sha256, quantization, prompt
    format ...), whether the run holds one model or a list or mapping of several."""
    models = manifest.get("models")
    if isinstance(models, dict) and isinstance(models.get(label), dict):
        return models[label]
    if isinstance(models, list):
        for record in models:
            if isinstance(record, dict) and record.get("label") == label:
                return record
    single = manifest.get("model")
    return single if isinstance(single, dict) else {}


def arms(run: RunFolder) -> list[Arm]:
    """Every (model, constraint mode) of a run, in the order the run made them."""
    several_models = len(model_summaries(run.summary)) > 1
    result = []
    for label, summary in model_summaries(run.summary).items():
        modes = summary.get("by_constraint") or {summary.get("primary_constraint", "none"): summary}
        for mode, mode_summary in modes.items():
            samples = [
                s
                for s in run.samples
                if s.get("constraint", "none") == mode
                and (not several_models or s.get("model", label) == label)
            ]
            result.append(Arm(run, label, mode, with_families(mode_summary), samples))
    return result


def with_families(result: dict[str, Any]) -> dict[str, Any]:
    """A mode's summary whose `metrics` also hold the extra metric families (`--metrics`)
    as `metrics.<family>.<figure>`, so cards and reports show them like the task's own."""
    extra = {
        name: {k: family["overall"].get(k) for k in family.get("higher_is_better") or {}}
        for name, family in (result.get("families") or {}).items()
        if family.get("role") != "task"
    }
    if not extra:
        return result
    return {**result, "metrics": {**(result.get("metrics") or {}), **extra}}


def groups(result: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The breakdowns of a summary (by_complexity, by_schema, by_depth ...), without
    the `by_` prefix."""
    return {
        key.removeprefix("by_"): value
        for key, value in result.items()
        if key.startswith("by_") and key not in _NOT_GROUPS and isinstance(value, dict)
    }


def numeric_metrics(metrics: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Every number in a metrics block, families flattened to `family.metric`; the
    example counts `n` and `n_skipped` are not metrics."""
    flat: dict[str, float] = {}
    for name, value in metrics.items():
        if name in ("n", "n_skipped") and not prefix:
            continue
        if isinstance(value, dict):
            flat.update(numeric_metrics(value, f"{prefix}{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[f"{prefix}{name}"] = float(value)
    return flat


def dig(data: Any, path: str) -> Any:
    """`data["a"]["b"]` for path "a.b"; None where any step is missing."""
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested facts (a device block with a board and temperatures, say) as `a.b` keys."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
