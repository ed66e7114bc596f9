"""Backends by name, imported lazily so a missing runtime only matters when it is used."""

from __future__ import annotations

import importlib
from typing import Any

from edgebench.backends.base import Backend
from edgebench.errors import UserError

# name -> (module, class); a backend whose runtime is missing says how to install it
_BACKENDS: dict[str, tuple[str, str]] = {
    "llama": ("edgebench.backends.llama_cpp", "LlamaCppBackend"),
    "fake": ("edgebench.backends.fake", "FakeBackend"),
}


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def create_backend(name: str, **options: Any) -> Backend:
    """Instantiate backend `name`; options must be picklable (they cross to a worker)."""
    try:
        module_name, class_name = _BACKENDS[name]
    except KeyError:
        raise UserError(f"unknown backend '{name}' (known: {', '.join(backend_names())})") from None
    module = importlib.import_module(module_name)
    return getattr(module, class_name)(**options)
