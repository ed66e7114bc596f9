"""User-level folders: the model cache and the default run output folder."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$EDGEBENCH_CACHE`, else `$XDG_CACHE_HOME/edgebench`, else `~/.cache/edgebench`."""
    explicit = os.environ.get("EDGEBENCH_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "edgebench"


def model_cache_dir() -> Path:
    """Where pulled and converted model files live (never in git)."""
    return cache_dir() / "models"


def user_registry_dir() -> Path:
    """Extra registry entries a user adds without touching the repo."""
    explicit = os.environ.get("EDGEBENCH_MODELS_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "edgebench" / "models"
