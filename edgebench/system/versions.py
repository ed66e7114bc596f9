"""Which software did the work: package versions, the git commit, the time, the runtime build."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

from edgebench import __version__
from edgebench.resources import repo_root
from edgebench.runtimes import runtime_packages

_PACKAGES = (
    *runtime_packages(),
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
    """edgebench's commit and whether tracked files changed, when run from a checkout."""
    root = repo_root()
    if root is None or not (root / ".git").exists():
        return None

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5, check=True
        )
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(dirty)}
