"""The backend contract: a prompt and decoding settings in, a timed `Generation` out.

Backends record raw timestamps only; the runner turns them into TTFT and tokens/s the
same way for every backend (see `edgebench.runner.timing`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

FINISH_STOP = "stop"  # end-of-generation token or a stop string
FINISH_LENGTH = "length"  # hit max_tokens
FINISH_ERROR = "error"


def now() -> float:
    """The one clock every timestamp comes from: monotonic, and system-wide on Linux,
    so a worker's timestamps and the parent's can be compared."""
    return time.perf_counter()


@dataclass(frozen=True)
class DecodeSettings:
    """Greedy decoding with a token budget; `stop` strings end the output early."""

    max_tokens: int = 512
    stop: tuple[str, ...] = ()


@dataclass
class Generation:
    """One model answer and the raw facts needed to time it.

    `generated_tokens` counts every token the model sampled, including an end-of-turn
    token that is not part of `text`; `output_tokens` counts the tokens of `text`.
    Decode speed is (generated_tokens - 1) / (t_end - t_first_token): every sampled token
    after the first needed one forward pass.
    """

    text: str
    prompt_tokens: int
    output_tokens: int
    generated_tokens: int
    finish_reason: str
    t_start: float
    t_first_token: float | None
    t_end: float
    error: str | None = None
    # The runtime's own performance counters for this request, for cross-checks.
    runtime_counters: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LoadInfo:
    """What a backend reports once its model is loaded."""

    n_ctx: int
    runtime: dict[str, Any]  # runtime name, versions, build and system info


class Backend(Protocol):
    """Everything the runner needs from a runtime. Heavy imports happen in `load`."""

    name: str

    def count_tokens(self, prompts: list[str]) -> list[int]:
        """Token counts of rendered prompts (special tokens parsed), without the model."""
        ...

    def load(self, n_ctx: int) -> LoadInfo: ...

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation: ...

    def close(self) -> None: ...
