"""Backends by name, imported lazily so a missing runtime only matters when it is used.
Which backends exist and which constraint modes each decodes is declared per runtime in
`edgebench.runtimes`."""

from __future__ import annotations

import importlib
from typing import Any

from edgebench.backends.base import Backend
from edgebench.errors import UserError
from edgebench.runtimes import RUNTIMES

# name -> (module, class); a backend whose runtime is missing says how to install it
_BACKENDS: dict[str, tuple[str, str]] = {
    name: where for runtime in RUNTIMES.values() for name, where in runtime.backends.items()
}


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


class UnsupportedConstraint(UserError):
    """A constraint mode a runtime cannot apply: recorded as a skip, not a crash."""


def backend_for(runtime: str, mode: str) -> tuple[str, dict[str, Any]]:
    """The backend name and extra options that decode `runtime` models under `mode`."""
    info = RUNTIMES.get(runtime)
    if info is None or mode not in info.modes:
        reason = info.unsupported.get(mode) if info is not None else None
        raise UnsupportedConstraint(
            f"constraint '{mode}' is not available for {runtime} models: "
            f"{reason or 'not implemented for this runtime'}"
        ) from None
    backend, options = info.modes[mode]
    return backend, dict(options)


def create_backend(name: str, **options: Any) -> Backend:
    """Instantiate backend `name`; options must be picklable (they cross to a worker)."""
    try:
        module_name, class_name = _BACKENDS[name]
    except KeyError:
        raise UserError(f"unknown backend '{name}' (known: {', '.join(backend_names())})") from None
    module = importlib.import_module(module_name)
    return getattr(module, class_name)(**options)
