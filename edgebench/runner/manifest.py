"""What a run was: device, versions, model, dataset and every setting, for `manifest.json`."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from edgebench import __version__
from edgebench.resources import repo_root
from edgebench.runner.device import device_info

__all__ = ["dataset_hash", "device_info", "git_commit", "package_versions", "runtime_build"]

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


def runtime_build(runtime: dict[str, Any] | None) -> dict[str, Any] | None:
    """The device block's `runtime`: the inference library's name, versions and build
    (a backend reports it under `build` when it loads a model)."""
    return (runtime or {}).get("build")


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
