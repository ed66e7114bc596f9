"""`edgebench score`: score a stored run again without a model.

The raw outputs in samples.jsonl are parsed and scored again with the task's own scores
and the selected metric families, against the same dataset (checked by its sha256);
samples.jsonl, manifest.json and summary.json are then replaced atomically. Without
`--metrics` the families the run recorded are used with their recorded parameters, so
a run re-scored by the same code reproduces its summary exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from edgebench import __version__
from edgebench.errors import UserError
from edgebench.io import write_json_atomic, write_jsonl_atomic
from edgebench.metrics import Family, get_family, select_families, task_family
from edgebench.metrics.apply import SCORING_KEYS, describe_families, score_sample
from edgebench.report.rundata import load_run
from edgebench.runner.prepare import load_examples
from edgebench.runner.run import RunResult, RunSettings
from edgebench.runner.samples import is_skipped
from edgebench.runner.summary import summarize
from edgebench.system import versions as mf
from edgebench.tasks import get_task
from edgebench.tasks.base import Example, Task


def _run_examples(
    manifest: dict[str, Any], task: Task, dataset: Path | None, schemas: Path | None
) -> dict[str, Example]:
    """The run's examples by id, from its dataset (or the one given), which must be the
    same data: scores against other data would not be the run's."""
    recorded = manifest.get("dataset") or {}
    path = dataset or (Path(recorded["path"]) if recorded.get("path") else None)
    if path is None:
        raise UserError("the manifest names no dataset; give it with --dataset")
    folder = schemas or (Path(recorded["schemas"]) if recorded.get("schemas") else None)
    if not path.is_file():
        raise UserError(f"{path}: the run's dataset is not there; give it with --dataset")
    examples, info = load_examples(task, RunSettings(dataset=path, schemas=folder))
    if recorded.get("sha256") and info["sha256"] != recorded["sha256"]:
        raise UserError(
            f"{path}: not the dataset this run used (sha256 {info['sha256'][:12]}..., the "
            f"run recorded {recorded['sha256'][:12]}...)"
        )
    return {example.id: example for example in examples}


def _rescored(sample: dict[str, Any], scored: dict[str, Any]) -> dict[str, Any]:
    """`sample` with its scoring fields replaced by `scored`, where they were."""
    record: dict[str, Any] = {}
    placed = False
    for key, value in sample.items():
        if key not in SCORING_KEYS:
            record[key] = value
        elif not placed:
            record.update(scored)
            placed = True
    if not placed:
        record.update(scored)
    return record


def _families(
    manifest: dict[str, Any],
    task: Task,
    metrics: Sequence[str] | None,
    params: Mapping[str, Mapping[str, Any]],
) -> list[Family] | None:
    """The families to score with: those given, else those the run recorded, with the
    recorded parameters unless overridden. None for a run made before runs recorded
    families, re-scored without --metrics (its summary has no families)."""
    recorded = manifest.get("families") or {}
    if metrics is None and not recorded:
        if params:
            raise UserError("--metric-param needs --metrics for a run that recorded no families")
        return None
    if metrics is None:
        names = [name for name, info in recorded.items() if info.get("role") != "task"]
    else:
        names = list(metrics)
    merged = {
        name: {**(recorded.get(name) or {}).get("parameters", {}), **params.get(name, {})}
        for name in dict.fromkeys([task_family(task), *names, *params])
    }
    return select_families(task, names, merged)


def rescore(
    run_dir: Path,
    metrics: Sequence[str] | None = None,
    metric_params: Mapping[str, Mapping[str, Any]] | None = None,
    dataset: Path | None = None,
    schemas: Path | None = None,
) -> RunResult:
    run = load_run(run_dir)
    manifest, samples = run.manifest, run.samples
    if not samples:
        raise UserError(f"{run_dir}: the run has no samples to score")
    task_name = (manifest.get("task") or {}).get("name")
    if not task_name:
        raise UserError(f"{run_dir}/manifest.json: no task name")
    task = get_task(task_name)
    params = dict(metric_params or {})
    consistency = manifest.get("kind") == "consistency"
    if consistency:
        if metrics:
            raise UserError("--metrics does not apply to a consistency run (it is scored by STED)")
        families: list[Family] | None = None
        if params:
            _set_sted_parameters(manifest, params)
    else:
        families = _families(manifest, task, metrics, params)
    examples = _run_examples(manifest, task, dataset, schemas)
    rescored = []
    for sample in samples:
        example = examples.get(sample.get("id", ""))
        if example is None:
            raise UserError(
                f"{run_dir}/samples.jsonl: example '{sample.get('id')}' is not in the dataset"
            )
        if is_skipped(sample):  # never decoded (too long for the context): stays unscored
            rescored.append(sample)
            continue
        scored = score_sample(task, families or (), sample.get("raw_output") or "", example)
        rescored.append(_rescored(sample, scored))
    if families is not None:
        manifest["families"] = describe_families(families, task)
    manifest.setdefault("rescored", []).append(
        {
            "at": mf.utc_now(),
            "edgebench": __version__,
            "git": mf.git_commit(),
            "families": [f.name for f in families] if families is not None else None,
        }
    )
    summary = summarize(manifest, rescored)
    write_jsonl_atomic(run_dir / "samples.jsonl", rescored)
    write_json_atomic(run_dir / "manifest.json", manifest)
    write_json_atomic(run_dir / "summary.json", summary)
    return RunResult(run_dir=run_dir, summary=summary)


def _set_sted_parameters(manifest: dict[str, Any], params: Mapping[str, Any]) -> None:
    unknown = [name for name in params if name != "sted"]
    if unknown:
        raise UserError(f"--metric-param: a consistency run uses only sted.*, not '{unknown[0]}'")
    described = manifest.setdefault("consistency", {})
    current = described.get("sted_parameters") or {}
    described["sted_parameters"] = get_family("sted", {**current, **params["sted"]}).parameters()
