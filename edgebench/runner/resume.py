"""`--resume`: what an unfinished run left to build on, whether what would run now is the
same run, and the settings to continue it with."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.runfolder.read import MANIFEST, read_samples
from edgebench.runner.samples import arm_key_of, is_worker_failure
from edgebench.runner.spec import RESUMABLE_CHANGES, ModelUnderTest, RunSettings
from edgebench.system.device import device_info
from edgebench.system.versions import package_versions

# RunSettings field -> the option that sets it, for messages
_OPTION_NAMES = {
    "constraints": "--constraint",
    "warmup": "--warmup/--no-warmup",
    "guard": "--guard/--no-guard",
}


@dataclass
class ResumePoint:
    """What an earlier, unfinished session of a run left to build on."""

    samples: list[dict[str, Any]]  # records kept, in file order
    torn_line: bool  # the last line was cut short by a crash and is dropped
    retried: int  # records of worker failures (crashed, timeout), dropped to run again
    duplicates: int  # records of an example already kept (the first one stays)


def resume_point(run_dir: Path, with_model: bool = False) -> ResumePoint:
    """The records to keep; `with_model`: arms are keyed by model and mode."""
    records, torn = read_samples(run_dir)
    kept: list[dict[str, Any]] = []
    seen: set[tuple[str, Any]] = set()
    retried = duplicates = 0
    for record in records:
        key = (arm_key_of(record, with_model), record.get("id"))
        if is_worker_failure(record):
            retried += 1
        elif key in seen:
            duplicates += 1
        else:
            seen.add(key)
            kept.append(record)
    return ResumePoint(kept, torn, retried, duplicates)


def resume_conflict(
    manifest: dict[str, Any],
    settings: RunSettings,
    model: ModelUnderTest | list[ModelUnderTest],
    task_name: str,
    prompt_template: str,
    dataset_info: dict[str, Any],
) -> str | None:
    """The first way the run to resume differs from what would run now, or None.

    Models (one, or the list of a multi-model run) and dataset are compared by content
    (sha256), settings by value, except those `--resume` may change (RESUMABLE_CHANGES)."""
    models = model if isinstance(model, list) else [model]
    conflict = _models_conflict(manifest, models)
    if conflict is not None:
        return conflict
    stored_data = manifest.get("dataset") or {}
    if stored_data.get("sha256") != dataset_info.get("sha256"):
        return _differs(
            "dataset sha256", stored_data.get("sha256"), dataset_info.get("sha256"), short=True
        )
    stored_settings = manifest.get("settings") or {}
    current = settings_record(settings)
    for name, value in current.items():
        if name not in RESUMABLE_CHANGES and stored_settings.get(name) != value:
            option = _OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
            return _differs(f"setting {option}", stored_settings.get(name), value)
    stored_task = manifest.get("task") or {}
    if stored_task.get("name") != task_name:
        return _differs("task", stored_task.get("name"), task_name)
    if stored_task.get("prompt_template") != prompt_template:
        return "the task's prompt template differs (edgebench was changed since)"
    stored_packages = manifest.get("packages") or {}
    for name, version in package_versions().items():
        if name in stored_packages and stored_packages[name] != version:
            return _differs(f"{name} version", stored_packages[name], version)
    stored_device = manifest.get("device") or {}
    device = device_info(settings.threads)
    for name in ("cpu_model", "machine", "logical_cores"):
        if stored_device.get(name) != device.get(name):
            return _differs(f"device {name}", stored_device.get(name), device.get(name))
    return None


def _models_conflict(manifest: dict[str, Any], models: list[ModelUnderTest]) -> str | None:
    """How the models now differ from the run's: number, names (a multi-model run's arms
    are keyed by them), content, prompt format."""
    stored_list = manifest.get("models")
    if len(models) > 1 or stored_list:
        stored = stored_list if isinstance(stored_list, list) else [manifest.get("model") or {}]
        labels = [str(r.get("label")) for r in stored if isinstance(r, dict)]
        if labels != [m.label for m in models]:
            return _differs("models", ",".join(labels), ",".join(m.label for m in models))
    else:
        stored = [manifest.get("model") or {}]
    for record, model in zip(stored, models, strict=True):
        name = f"model {model.label}" if len(models) > 1 else "model"
        if record.get("sha256") != model.sha256:
            return _differs(f"{name} sha256", record.get("sha256"), model.sha256, short=True)
        if record.get("prompt_format") != _json_value(model.prompt_format.describe()):
            whose = f"{model.label}'s" if len(models) > 1 else "the model's"
            return f"{whose} prompt format differs"
    return None


def _differs(what: str, stored: Any, now: Any, *, short: bool = False) -> str:
    if short:  # hashes: enough characters to tell them apart
        stored = f"{str(stored)[:12]}…" if stored else stored
        now = f"{str(now)[:12]}…" if now else now
    return f"{what} differs (run: {stored}, now: {now})"


def settings_record(settings: RunSettings) -> dict[str, Any]:
    """The settings as the manifest stores them (JSON values)."""
    record = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()}
    return _json_value(record)


def _json_value(value: Any) -> Any:
    """What `value` reads back as from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


def settings_from_manifest(
    manifest: dict[str, Any], run_dir: Path, given: dict[str, Any]
) -> RunSettings:
    """The settings to resume a run with: the stored ones, with the options the user gave
    (`given`: field -> value, only those given) on top. `resume_conflict` later refuses
    any given measurement setting that differs."""
    stored = dict(manifest.get("settings") or {})
    fields = set(RunSettings.__dataclass_fields__)
    values: dict[str, Any] = {k: v for k, v in stored.items() if k in fields}
    for key in ("dataset", "schemas"):
        if values.get(key) is not None:
            values[key] = Path(values[key])
    for key in ("constraints", "metrics"):
        if key in values:
            values[key] = tuple(values[key])
    values.update(given)
    values["out"] = run_dir
    try:
        return RunSettings(**values)
    except TypeError as exc:
        raise UserError(f"{run_dir / MANIFEST}: settings cannot be read back ({exc})") from None
