"""User-level folders: the model cache and the user's own registry entries."""

from __future__ import annotations

import os
from pathlib import Path


def _user_dir(override_var: str, xdg_var: str, fallback: str, *parts: str) -> Path:
    """`$override_var` if set, else `$xdg_var/<parts>`, else `~/<fallback>/<parts>`."""
    explicit = os.environ.get(override_var)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get(xdg_var)
    base = Path(xdg).expanduser() if xdg else Path.home() / fallback
    return base.joinpath(*parts)


def cache_dir() -> Path:
    """`$EDGEBENCH_CACHE`, else `$XDG_CACHE_HOME/edgebench`, else `~/.cache/edgebench`."""
    return _user_dir("EDGEBENCH_CACHE", "XDG_CACHE_HOME", ".cache", "edgebench")


def model_cache_dir() -> Path:
    """Where pulled and converted model files live (never in git)."""
    return cache_dir() / "models"


def user_registry_dir() -> Path:
    """Extra registry entries a user adds without touching the repo:
    `$EDGEBENCH_MODELS_DIR`, else `$XDG_CONFIG_HOME/edgebench/models`."""
    return _user_dir("EDGEBENCH_MODELS_DIR", "XDG_CONFIG_HOME", ".config", "edgebench", "models")
