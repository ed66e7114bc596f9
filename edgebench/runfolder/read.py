"""Reading a run folder's files back as records, with a one-line error for anything that
is not a run folder of a format this edgebench reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from edgebench.errors import UserError
from edgebench.io import read_jsonl_numbered
from edgebench.readback import jsonl_values, present, read_json
from edgebench.record import FormatError, Record
from edgebench.runfolder.records import (
    SCHEMA_VERSION,
    BenchRecord,
    BenchRow,
    FidelityRecord,
    Manifest,
    PowerReading,
    SampleRecord,
    Summary,
    TimelineRow,
)

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
SUMMARY = "summary.json"
FIDELITY = "fidelity.json"
TIMELINE = "timeline.jsonl"  # heat and power once a second (format 2.7)
POWER_LOG = "power-log.jsonl"  # the --power-log rows of the run's time (format 2.7)

R = TypeVar("R", bound=Record)


def check_version(data: dict[str, Any], where: Path) -> None:
    """Refuse a major version of the format this edgebench does not read."""
    version = data.get("schema_version")
    if version is None:  # folders made before the format was versioned
        raise UserError(
            f"{where}: a run folder of edgebench's first, unversioned format; this edgebench "
            f"reads format {SCHEMA_VERSION} (run it again to compare)"
        )
    major = str(version).split(".")[0]
    if major != SCHEMA_VERSION.split(".")[0]:
        raise UserError(
            f"{where}: run-folder format {version}, but this edgebench reads format "
            f"{SCHEMA_VERSION.split('.')[0]}.x; use the edgebench that made it"
        )


def _read_json(path: Path) -> Any:
    """A JSON document of the run (or a bench file) through the bounded reader: a regular
    file within the size limit, integers and nesting bounded, one-line errors."""
    return read_json(path, "run file")


def _read_json_object(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object")
    return data


def _as_record(cls: type[R], data: Any, where: str) -> R:
    """`data` as a `cls`, or a one-line error naming the file (`where`) and the field."""
    try:
        return cls.from_json(data)
    except FormatError as exc:
        raise UserError(f"{where}: not a run record of this edgebench ({exc})") from None


def read_manifest(run_dir: Path) -> Manifest:
    """A run folder's manifest, or a one-line error saying what is wrong with it."""
    path = run_dir / MANIFEST
    if run_dir.is_file() and run_dir.suffix.lower() == ".json":
        raise UserError(
            f"{run_dir}: a file, not a run folder (`card` and `report` read the JSON of "
            "`edgebench bench`)"
        )
    if not run_dir.is_dir():
        if present(run_dir):  # a FIFO, a device, a dangling link: there, but not a folder
            raise UserError(f"{run_dir}: not a run folder (nor a results database)")
        raise UserError(f"{run_dir}: no such run folder")
    if not present(path):
        raise UserError(f"{run_dir}: not a run folder (no {MANIFEST})")
    data = _read_json_object(path)
    check_version(data, path)
    manifest = _as_record(Manifest, data, str(path))
    _check_arms(manifest, path)
    return manifest


def _check_arms(manifest: Manifest, path: Path) -> None:
    """Every arm names one of the run's models: readers look its model up (a hand-edited
    manifest whose arm names no model was a StopIteration traceback)."""
    labels = {model.label for model in manifest.models}
    for number, arm in enumerate(manifest.arms):
        if arm.model not in labels:
            raise UserError(
                f"{path}: not a run record of this edgebench (arms[{number}].model: "
                f"{arm.model!r} is none of the run's models)"
            )


def read_samples(run_dir: Path) -> tuple[list[SampleRecord], bool]:
    """The run's sample records and whether a torn last line was left out."""
    path = run_dir / SAMPLES
    if not present(path):  # anything else there is read, and refused in one line
        return [], False
    rows, torn = read_jsonl_numbered(path)  # the record check names line and field
    records = [_as_record(SampleRecord, row, f"{path}:{line}") for line, row in rows]
    return superseded(records), torn


def superseded(records: list[SampleRecord]) -> list[SampleRecord]:
    """The records as final: a re-timed example's line (passes > 1) takes the place of
    the last earlier answered line of its (arm, example, draw); one with no such line
    stays where it is (a file rewritten by --resume or `score` holds only the final)."""
    final: list[SampleRecord] = []
    at: dict[tuple[object, ...], int] = {}  # key -> position of its answered record
    for record in records:
        if record.supersedes and record.key in at:
            final[at[record.key]] = record
            continue
        if not record.worker_failure:
            at.setdefault(record.key, len(final))
        final.append(record)
    return final


def read_rows(run_dir: Path, name: str, cls: type[R]) -> list[R]:
    """The records of a JSONL file of the run folder (none when it is missing), a torn
    last line left out."""
    path = run_dir / name
    if not present(path):
        return []
    rows, _torn = jsonl_values(path, "run file")  # no model output here: nesting bounded
    return [_as_record(cls, row, f"{path}:{line}") for line, row in rows]


def _read_optional(path: Path, cls: type[R]) -> R | None:
    """A versioned record file of the run, or None when the run has none."""
    if not present(path):
        return None
    data = _read_json_object(path)
    check_version(data, path)
    return _as_record(cls, data, str(path))


def read_summary(run_dir: Path) -> Summary | None:
    """The stored summary, or None when the run wrote none (yet)."""
    return _read_optional(run_dir / SUMMARY, Summary)


def read_fidelity(run_dir: Path) -> FidelityRecord | None:
    """The run's fidelity record, or None when it has none (one model, an older run)."""
    return _read_optional(run_dir / FIDELITY, FidelityRecord)


@dataclass(frozen=True)
class RunRecords:
    """A run folder's records as they are on disk."""

    path: Path
    manifest: Manifest
    samples: list[SampleRecord]
    torn_line: bool
    timeline: list[TimelineRow] = field(default_factory=list)
    power_log: list[PowerReading] = field(default_factory=list)


def read_run(run_dir: Path) -> RunRecords:
    manifest = read_manifest(run_dir)
    samples, torn = read_samples(run_dir)
    timeline = read_rows(run_dir, TIMELINE, TimelineRow)
    power_log = read_rows(run_dir, POWER_LOG, PowerReading)
    return RunRecords(run_dir, manifest, samples, torn, timeline, power_log)


def read_bench(path: Path) -> BenchRecord | list[BenchRow]:
    """What `edgebench bench` wrote (`--out`: a BenchRecord) or printed (`--format json`:
    its rows), or a one-line error naming the file and the field."""
    data = _read_json(path)
    if isinstance(data, list):
        try:
            return [BenchRow.from_json(row, f"[{i}]") for i, row in enumerate(data)]
        except FormatError as exc:
            raise UserError(f"{path}: not the rows of `edgebench bench` ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != "edgebench-bench":
        raise UserError(f"{path}: not a run folder or a JSON file of `edgebench bench`")
    if data.get("schema_version") is not None:  # format-1 bench files had none
        check_version(data, path)
    try:
        return BenchRecord.from_json(data)
    except FormatError as exc:
        raise UserError(f"{path}: not a bench record of this edgebench ({exc})") from None
