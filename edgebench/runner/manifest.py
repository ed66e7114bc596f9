"""What a run was: device, versions, model, dataset and every setting, for `manifest.json`."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from edgebench import __version__
from edgebench.resources import repo_root

_PACKAGES = (
    "llama-cpp-python",
    "onnxruntime",
    "tokenizers",
    "jsonschema",
    "numpy",
    "typer",
    "rich",
    "psutil",
    "jinja2",
)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _cpu_model(proc_root: Path = Path("/proc")) -> str | None:
    try:
        for line in (proc_root / "cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def device_info(threads: int) -> dict[str, Any]:
    """The machine the numbers belong to. Absent facts are None, never guessed."""
    memory = psutil.virtual_memory()
    return {
        "cpu_model": _cpu_model(),
        "machine": platform.machine(),
        "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "threads_used": threads,
        "ram_total_mb": round(memory.total / 2**20),
        "ram_available_mb": round(memory.available / 2**20),
        "os": platform.platform(),
        "python": sys.version.split()[0],
    }


def package_versions(names: tuple[str, ...] = _PACKAGES) -> dict[str, str | None]:
    """edgebench's version and those of `names` (None when not installed)."""
    versions: dict[str, str | None] = {"edgebench": __version__}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> dict[str, Any] | None:
    root = repo_root()
    if root is None or not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(dirty)}


def dataset_hash(dataset: Path, schemas: Path | None) -> str:
    """sha256 over the dataset file and every schema (relative name and bytes), so the
    same data in another folder hashes the same and any edit changes the hash."""
    named = [(dataset.name, dataset)]
    if schemas is not None and schemas.is_dir():
        named += [(p.relative_to(schemas).as_posix(), p) for p in sorted(schemas.rglob("*.json"))]
    digest = hashlib.sha256()
    for name, path in named:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
