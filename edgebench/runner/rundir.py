"""A run folder on disk: created or reopened, locked against a second writer, and read
back for `--resume`.

The lock is an exclusive `flock` on RUN_DIR/.edgebench.lock, held for the whole run.
The kernel drops it when the process dies however it dies (SIGKILL, power cut), so a
lock file left behind is stale by construction and the next run takes it over; the
file's content (pid, host, start time) names the holder when the lock is busy.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import read_jsonl_checked, write_json_atomic
from edgebench.runner import manifest as mf
from edgebench.runner.samples import arm_key_of, is_worker_failure
from edgebench.runner.spec import RESUMABLE_CHANGES, ModelUnderTest, RunSettings

LOCK_FILE = ".edgebench.lock"
MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
SUMMARY = "summary.json"

# RunSettings field -> the option that sets it, for messages
_OPTION_NAMES = {
    "constraints": "--constraint",
    "warmup": "--warmup/--no-warmup",
    "guard": "--guard/--no-guard",
}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


class RunLock:
    """Exclusive use of one run folder by one process (see the module docstring)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None
        self.stale: dict[str, Any] | None = None  # who held it last, if they died

    def acquire(self) -> RunLock:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UserError(f"cannot write in {self.path.parent}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe_holder(_read_holder(fd))
            os.close(fd)
            raise UserError(
                f"{self.path.parent} is in use by another edgebench run ({holder}); "
                "wait for it to finish or stop it first"
            ) from None
        except OSError:  # no flock here (some network file systems): trust the pid
            holder = _read_holder(fd)
            if holder and _alive_here(holder):
                os.close(fd)
                raise UserError(
                    f"{self.path.parent} is in use by another edgebench run "
                    f"({_describe_holder(holder)})"
                ) from None
        self.stale = _read_holder(fd) or None
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": mf.utc_now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)  # closing drops the flock
        self._fd = None


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe_holder(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown"
    return f"pid {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')}"


def _alive_here(holder: dict[str, Any]) -> bool:
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return True  # cannot tell for another machine: assume it is running
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunFolder:
    """The folder of one run, locked while this object is open."""

    def __init__(self, path: Path, lock: RunLock) -> None:
        self.path = path
        self.lock = lock

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def samples_path(self) -> Path:
        return self.path / SAMPLES

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    @classmethod
    def create(cls, settings: RunSettings, model_label: str, started: str) -> RunFolder:
        """A new run folder: `--out` (new or empty), else runs/<time>-<model>-<task>."""
        if settings.out is not None:
            run_dir = settings.out
            if run_dir.exists() and not run_dir.is_dir():
                raise UserError(f"--out {run_dir} is a file, not a folder")
            try:
                run_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(f"cannot create {run_dir}: {exc.strerror}") from None
            lock = RunLock(run_dir).acquire()
            if any(p.name != LOCK_FILE for p in run_dir.iterdir()):
                lock.release()
                hint = " or continue it with --resume" if (run_dir / MANIFEST).exists() else ""
                raise UserError(f"output folder {run_dir} is not empty; choose another --out{hint}")
            return cls(run_dir, lock)
        stamp = started.replace(":", "").replace("-", "").replace("+0000", "")[:15]
        base = Path("runs") / f"{stamp}-{_slug(model_label)}-{settings.task}"
        base.parent.mkdir(parents=True, exist_ok=True)
        run_dir, suffix = base, 1
        while True:  # mkdir claims a name atomically, so two runs never share one
            try:
                run_dir.mkdir()
                break
            except FileExistsError:
                suffix += 1
                run_dir = base.with_name(f"{base.name}~{suffix}")
        return cls(run_dir, RunLock(run_dir).acquire())

    @classmethod
    def reopen(cls, run_dir: Path) -> RunFolder:
        """An existing run folder, for --resume."""
        read_manifest(run_dir)  # a clear error before taking the lock
        return cls(run_dir, RunLock(run_dir).acquire())

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json_atomic(self.manifest_path, manifest)

    def release(self) -> None:
        self.lock.release()


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run folder's manifest, or a one-line error saying what is wrong with it."""
    manifest_path = run_dir / MANIFEST
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: no such run folder")
    if not manifest_path.is_file():
        raise UserError(f"{run_dir}: not a run folder (no manifest.json)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{manifest_path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise UserError(f"{manifest_path}: not a run manifest (expected a JSON object)")
    return manifest


def read_samples(run_dir: Path) -> tuple[list[dict[str, Any]], bool]:
    """The run's sample records and whether a torn last line was left out."""
    path = run_dir / SAMPLES
    return read_jsonl_checked(path) if path.is_file() else ([], False)


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
    for name, version in mf.package_versions().items():
        if name in stored_packages and stored_packages[name] != version:
            return _differs(f"{name} version", stored_packages[name], version)
    stored_device = manifest.get("device") or {}
    device = mf.device_info(settings.threads)
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
