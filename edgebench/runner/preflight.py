"""Checks made before a model is loaded: will it fit in the memory that is free?

A model too big for the device does not fail cleanly: the OOM killer ends the worker
(or, with swap, the device crawls for an hour). The estimate is what llama.cpp will
need at least: the model file (mapped and read in full while decoding) plus the K and V
cache for the context the run asks for.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import psutil

from edgebench.errors import UserError
from edgebench.runner.spec import ModelUnderTest

_MB = 1024 * 1024


@dataclass(frozen=True)
class MemoryEstimate:
    model_bytes: int
    kv_bytes: int | None  # None: the model's metadata does not say
    n_ctx: int
    available_bytes: int

    @property
    def needed_bytes(self) -> int:
        return self.model_bytes + (self.kv_bytes or 0)

    @property
    def fits(self) -> bool:
        return self.needed_bytes <= self.available_bytes

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "needed_bytes": self.needed_bytes, "fits": self.fits}


def available_memory_bytes() -> int:
    """Memory the system can give a new process without swapping (MemAvailable)."""
    return int(psutil.virtual_memory().available)


def estimate_memory(model: ModelUnderTest, n_ctx: int, available: int) -> MemoryEstimate:
    kv = None if model.kv_bytes_per_token is None else model.kv_bytes_per_token * n_ctx
    return MemoryEstimate(model.size_bytes, kv, n_ctx, available)


def check_memory(model: ModelUnderTest, estimate: MemoryEstimate) -> None:
    """Refuse a model that will not fit, with both figures and the way out."""
    if estimate.fits:
        return
    kv = (
        f"KV cache {_mb(estimate.kv_bytes)} MB at n_ctx {estimate.n_ctx}"
        if estimate.kv_bytes is not None
        else "KV cache unknown"
    )
    raise UserError(
        f"not enough memory for {model.label}: it needs about {_mb(estimate.needed_bytes)} MB "
        f"(model file {_mb(estimate.model_bytes)} MB + {kv}) but {_mb(estimate.available_bytes)}"
        " MB is available; free memory, lower --n-ctx, or pass --ignore-memory-check"
    )


def _mb(n: int | None) -> str:
    return f"{(n or 0) / _MB:,.0f}"
