"""`--resume`: what an unfinished run left to build on, whether what would run now is the
same run, and the settings to continue it with."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.runfolder.records import DatasetRecord, Manifest, RunSettings, SampleRecord
from edgebench.runner.spec import RESUMABLE_CHANGES, ModelUnderTest
from edgebench.system.device import device_info
from edgebench.system.records import Device, DeviceIdentity
from edgebench.system.versions import package_versions
from edgebench.tasks.base import PromptingTask, prompt_template_for

# RunSettings field -> the option that sets it, for messages
_OPTION_NAMES = {
    "constraints": "--constraint",
    "warmup": "--warmup/--no-warmup",
    "guard": "--guard/--no-guard",
}


@dataclass(frozen=True)
class ResumePoint:
    """What an earlier, unfinished session of a run left to build on."""

    samples: list[SampleRecord]  # records kept, in file order
    torn_line: bool  # the last line was cut short by a crash and is dropped
    retried: int  # records of worker failures (crashed, timeout), dropped to run again
    duplicates: int  # records of a job already kept (the first one stays)


def resume_point(records: list[SampleRecord], torn: bool) -> ResumePoint:
    """The records to keep: one per (arm, example, draw), worker failures left to run."""
    kept: list[SampleRecord] = []
    seen: set[tuple[Any, ...]] = set()
    retried = duplicates = 0
    for record in records:
        if record.worker_failure:
            retried += 1
        elif record.key in seen:
            duplicates += 1
        else:
            seen.add(record.key)
            kept.append(record)
    return ResumePoint(kept, torn, retried, duplicates)


def resume_conflict(
    manifest: Manifest,
    settings: RunSettings,
    models: list[ModelUnderTest],
    task: PromptingTask,
    dataset: DatasetRecord,
    device_name: str | None = None,
) -> str | None:
    """The first way the run to resume differs from what would run now, or None.

    Models and dataset are compared by content (sha256), settings by value, except those
    `--resume` may change (RESUMABLE_CHANGES); the device by its identity (`device_name`
    names this one in the message)."""
    stored_labels = [m.label for m in manifest.models]
    if stored_labels != [m.label for m in models]:
        return _differs("models", ",".join(stored_labels), ",".join(m.label for m in models))
    for record, model in zip(manifest.models, models, strict=True):
        name = f"model {model.label}" if len(models) > 1 else "model"
        if record.sha256 != model.sha256:
            return _differs(f"{name} sha256", record.sha256, model.sha256, short=True)
        if record.prompt_format != model.prompt_record:
            whose = f"{model.label}'s" if len(models) > 1 else "the model's"
            return f"{whose} prompt format differs"
    if manifest.dataset.sha256 != dataset.sha256:
        return _differs("dataset sha256", manifest.dataset.sha256, dataset.sha256, short=True)
    for field in fields(RunSettings):
        stored, now = getattr(manifest.settings, field.name), getattr(settings, field.name)
        if field.name not in RESUMABLE_CHANGES and stored != now:
            option = _OPTION_NAMES.get(field.name, "--" + field.name.replace("_", "-"))
            return _differs(f"setting {option}", _shown(stored), _shown(now))
    if manifest.task.name != task.name:
        return _differs("task", manifest.task.name, task.name)
    if manifest.task.prompt_style != settings.prompt:
        return _differs("prompt style (--prompt)", manifest.task.prompt_style, settings.prompt)
    if manifest.task.prompt_template != prompt_template_for(task, settings.prompt):
        return "the task's prompt template differs (edgebench was changed since)"
    for name, version in package_versions().items():
        if name in manifest.packages and manifest.packages[name] != version:
            return _differs(f"{name} version", manifest.packages[name], version)
    return device_conflict(manifest.device, device_info(settings.threads, name=device_name))


def device_conflict(stored: Device, now: Device) -> str | None:
    """The run was started on another device than this one: another unit or another kind
    of device (its identity's unit_id, model_id), named by name and fingerprint. A run
    made before format 2.8 has no identity: its CPU, arch and cores are compared."""
    if stored.identity is None or now.identity is None:
        for name in ("cpu_model", "machine", "logical_cores"):
            stored_value, value = getattr(stored, name), getattr(now, name)
            if stored_value != value:
                return _differs(f"device {name}", stored_value, value)
        return None
    run, here = stored.identity, now.identity
    if (run.unit_id, run.model_id) == (here.unit_id, here.model_id):
        return None
    return (
        f"it was started on another device (run: {_device(run)}, now: {_device(here)}); "
        f"resume it on {run.name}"
    )


def _device(identity: DeviceIdentity) -> str:
    return f"{identity.name} · {identity.fingerprint} · {identity.model_label}"


def _shown(value: Any) -> Any:
    """A setting as the user typed it: lists for tuples (the manifest's JSON view)."""
    return list(value) if isinstance(value, tuple) else value


def _differs(what: str, stored: Any, now: Any, *, short: bool = False) -> str:
    if short:  # hashes: enough characters to tell them apart
        stored = f"{str(stored)[:12]}…" if stored else stored
        now = f"{str(now)[:12]}…" if now else now
    return f"{what} differs (run: {stored}, now: {now})"


def settings_from_manifest(manifest: Manifest, run_dir: Path, given: dict[str, Any]) -> RunSettings:
    """The settings to resume a run with: the stored ones, with the options the user gave
    (`given`: field -> value, only those given) on top. `resume_conflict` later refuses
    any given measurement setting that differs.

    A command is never taken from a run folder (folders are copied, fetched from hosts
    and shared): a run that polled `--power-command` continues only with the same
    command given again on the command line."""
    check_stored_command(manifest.settings.power_command, given.get("power_command"), run_dir)
    return replace(manifest.settings, **given, out=run_dir)


def check_stored_command(stored: str | None, given: str | None, run_dir: Path) -> None:
    """UserError unless the command given now is the one the run used (none: none)."""
    if stored is not None and given is None:
        raise UserError(
            f"cannot resume {run_dir}: it polled a power meter with --power-command, and "
            "a command is never taken from a run folder: give --power-command CMD again"
        )
    if stored != given:
        raise UserError(
            f"cannot resume {run_dir}: setting --power-command differs "
            f"(run: {_quoted(stored)}, now: {_quoted(given)})"
        )


def _quoted(command: str | None) -> str:
    """A command as text, control characters escaped (a folder's text is not trusted)."""
    return "none" if command is None else repr(command)
