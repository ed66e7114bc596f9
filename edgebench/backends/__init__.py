"""Backends by name, imported lazily so a missing runtime only matters when it is used."""

from __future__ import annotations

import importlib
from typing import Any

from edgebench.backends.base import Backend
from edgebench.errors import UserError

# name -> (module, class); a backend whose runtime is missing says how to install it
_BACKENDS: dict[str, tuple[str, str]] = {
    "llama": ("edgebench.backends.llama_cpp", "LlamaCppBackend"),
    "llama-outlines": ("edgebench.backends.llama_outlines", "OutlinesLlamaBackend"),
    "onnx": ("edgebench.backends.onnx_runtime", "OnnxBackend"),
    "fake": ("edgebench.backends.fake", "FakeBackend"),
}


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


# Which backend runs a constraint mode for a model's runtime, and with what options.
# A mode missing here is not available for that runtime.
_CONSTRAINT_BACKENDS: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {
    **{("llama", m): ("llama", {"constraint_mode": m}) for m in ("none", "json", "gbnf", "mask")},
    ("llama", "outlines"): ("llama-outlines", {}),
    **{("onnx", m): ("onnx", {"constraint_mode": m}) for m in ("none", "json", "mask")},
    **{("fake", m): ("fake", {}) for m in ("none", "json", "gbnf", "outlines", "mask")},
}

# Combinations that cannot work, and why: a run records them as skipped arms.
_UNSUPPORTED: dict[tuple[str, str], str] = {
    ("onnx", "gbnf"): "GBNF grammars run inside llama.cpp's sampler; onnxruntime has none",
    ("onnx", "outlines"): (
        "Outlines 1.x has no onnxruntime model type (it drives transformers, llama.cpp and "
        "others itself); use `mask` for the schema on ONNX models"
    ),
}


class UnsupportedConstraint(UserError):
    """A constraint mode a runtime cannot apply: recorded as a skip, not a crash."""


def backend_for(runtime: str, mode: str) -> tuple[str, dict[str, Any]]:
    """The backend name and extra options that decode `runtime` models under `mode`."""
    try:
        return _CONSTRAINT_BACKENDS[(runtime, mode)]
    except KeyError:
        reason = _UNSUPPORTED.get((runtime, mode), "not implemented for this runtime")
        raise UnsupportedConstraint(
            f"constraint '{mode}' is not available for {runtime} models: {reason}"
        ) from None


def create_backend(name: str, **options: Any) -> Backend:
    """Instantiate backend `name`; options must be picklable (they cross to a worker)."""
    try:
        module_name, class_name = _BACKENDS[name]
    except KeyError:
        raise UserError(f"unknown backend '{name}' (known: {', '.join(backend_names())})") from None
    module = importlib.import_module(module_name)
    return getattr(module, class_name)(**options)
