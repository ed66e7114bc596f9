"""`edgebench score`: score a stored run again without a model.

The raw outputs in samples.jsonl are parsed and scored again with the run's metric
families (or those given), against the same dataset (checked by its sha256);
samples.jsonl, manifest.json and summary.json are then replaced atomically. Without
`--metrics` the families the run recorded are used with their recorded parameters, and
without `--parse` its recorded extraction mode, so a run scored again by the same code
reproduces its summary exactly; `--parse` re-scores with the other extraction and records
it in the settings. A scorer failing on one output is that sample's error, as in `run`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from edgebench import __version__
from edgebench.errors import UserError
from edgebench.io import write_jsonl_atomic
from edgebench.metrics import select_families
from edgebench.metrics.base import Family
from edgebench.metrics.score import describe_families, families_of
from edgebench.runfolder.folder import RunFolder
from edgebench.runfolder.read import read_run
from edgebench.runfolder.records import (
    FINISH_JSON_COMPLETE,
    GitCommit,
    Manifest,
    RescoreRecord,
    RunSettings,
    SampleRecord,
)
from edgebench.runner.engine import RunResult
from edgebench.runner.interrupt import StopRequest
from edgebench.runner.jobs import sted_parameters
from edgebench.runner.prepare import load_examples
from edgebench.runner.samples import SCORING_FAILED, score_text
from edgebench.scoring.extract import LENIENT, Extraction, check_parse_mode, extraction_for
from edgebench.summary import summarize
from edgebench.system.versions import git_commit, utc_now
from edgebench.tasks import get_task, reference_of
from edgebench.tasks.base import Example, Task


def _run_examples(
    manifest: Manifest, task: Task, dataset: Path | None, schemas: Path | None
) -> dict[str, Example]:
    """The run's examples by id, from its dataset (or the one given), which must be the
    same data: scores against other data would not be the run's."""
    recorded = manifest.dataset
    path = dataset or (Path(recorded.path) if recorded.path else None)
    if path is None:
        raise UserError("the manifest names no dataset; give it with --dataset")
    folder = schemas or (Path(recorded.schemas) if recorded.schemas else None)
    if not path.exists():  # a file, or a folder of schemas (JSONSchemaBench)
        raise UserError(f"{path}: the run's dataset is not there; give it with --dataset")
    examples, found = load_examples(task, RunSettings(dataset=path, schemas=folder))
    if recorded.sha256 and found.sha256 != recorded.sha256:
        raise UserError(
            f"{path}: not the dataset this run used (sha256 {str(found.sha256)[:12]}..., the "
            f"run recorded {recorded.sha256[:12]}...)"
        )
    return {example.id: example for example in examples}


def _families(
    manifest: Manifest,
    metrics: Sequence[str] | None,
    params: Mapping[str, Mapping[str, Any]],
) -> list[Family]:
    """The families to score with: those given (after the task's own), else those the
    run recorded, with the recorded parameters unless overridden."""
    recorded = manifest.families
    if metrics is None:
        names = [name for name, record in recorded.items() if record.role != "task"]
    else:
        names = list(metrics)
    task_family = manifest.task_family
    merged = {
        name: {**(recorded[name].parameters if name in recorded else {}), **params.get(name, {})}
        for name in dict.fromkeys([task_family, *names, *params])
    }
    return select_families(task_family, names, merged)


def _with_sted_parameters(manifest: Manifest, params: Mapping[str, Any]) -> Manifest:
    """A consistency run compares its samples by STED: `--metric-param sted.*` only."""
    plan = manifest.consistency
    assert plan is not None
    sted = sted_parameters(plan.sted_parameters, params)
    return replace(manifest, consistency=replace(plan, sted_parameters=sted))


def _rescored(
    sample: SampleRecord, families: Sequence[Family], example: Example, extraction: Extraction
) -> SampleRecord:
    if sample.skipped:  # never decoded (too long for the context): stays unscored
        return sample
    scored, scoring_error = score_text(families, sample.raw_output, example, extraction)
    error = sample.error
    if error is None or error.startswith(SCORING_FAILED):
        error = scoring_error
    return replace(
        sample,
        parse=scored.parse,
        parsed=scored.parsed,
        scores=scored.scores,
        score_details=scored.details,
        error=error,
    )


def cut_answers_note(manifest: Manifest, samples: Sequence[SampleRecord], mode: str) -> str | None:
    """Why a reference re-score of a run decoded with edgebench's stop at the JSON is not
    the benchmark's score: some answers ended where their first JSON value closed."""
    if mode != "reference" or extraction_for(mode, reference_of(manifest.task.name)) is LENIENT:
        return None
    cut = sum(1 for sample in samples if sample.finish_reason == FINISH_JSON_COMPLETE)
    if not cut:
        return None
    return (
        f"{cut} answer(s) of this run stopped where their first JSON value closed "
        "(settings.stop_at_json): scored as decoded, not as the benchmark would see the "
        "whole answer (a run with --parse reference decodes whole answers)"
    )


def rescore(
    run_dir: Path,
    metrics: Sequence[str] | None = None,
    metric_params: Mapping[str, Mapping[str, Any]] | None = None,
    dataset: Path | None = None,
    schemas: Path | None = None,
    parse: str | None = None,
    note: Callable[[str], None] = lambda message: None,
) -> RunResult:
    """Score the run at `run_dir` again; `parse` (default: the mode the run recorded)
    chooses the extraction and is recorded in the manifest's settings. `note` is told
    what makes the scores differ from the benchmark's (see `cut_answers_note`)."""
    records = read_run(run_dir)
    manifest, samples = records.manifest, records.samples
    if not samples:
        raise UserError(f"{run_dir}: the run has no samples to score")
    mode = check_parse_mode(parse or manifest.settings.parse)
    extraction = extraction_for(mode, reference_of(manifest.task.name))
    caveat = cut_answers_note(manifest, samples, mode)
    if caveat is not None:
        note(caveat)
    task = get_task(manifest.task.name)
    params = dict(metric_params or {})
    if manifest.kind == "consistency":
        if metrics:
            raise UserError("--metrics does not apply to a consistency run (it is scored by STED)")
        families = families_of(manifest.families)
        if params:
            manifest = _with_sted_parameters(manifest, params)
    else:
        families = _families(manifest, metrics, params)
    examples = _run_examples(manifest, task, dataset, schemas)
    rescored = []
    for sample in samples:
        example = examples.get(sample.id)
        if example is None:
            raise UserError(f"{run_dir}/samples.jsonl: example '{sample.id}' is not in the dataset")
        rescored.append(_rescored(sample, families, example, extraction))
    git = git_commit()
    record = RescoreRecord(
        at=utc_now(),
        edgebench=__version__,
        git=GitCommit.from_json(git) if git else None,
        families=[f.name for f in families],
        parse=mode,
    )
    manifest = replace(
        manifest,
        settings=replace(manifest.settings, parse=mode),
        families=describe_families(families, manifest.task_family),
        rescored=[*manifest.rescored, record],
    )
    summary = summarize(manifest, rescored, records.timeline, records.power_log)
    folder = RunFolder(run_dir, None)
    # the three files agree or none changed: a Ctrl-C while they are written waits for
    # the last of them (samples rescored under a manifest of the old scoring would not)
    with StopRequest().deferred() as stop:
        write_jsonl_atomic(folder.samples_path, [s.to_json() for s in rescored])
        folder.write_manifest(manifest)
        folder.write_summary(summary)
    stop.check()
    return RunResult(run_dir=run_dir, summary=summary)
