"""The backend contract: a prompt and decoding settings in, a timed `Generation` out.

Backends record raw timestamps only; the runner turns them into TTFT and tokens/s the
same way for every backend (see `edgebench.runner.timing`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from edgebench.backends.answer_end import EndPolicy
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.runfolder.records import FinishReason  # the values: runfolder/records.py


def now() -> float:
    """The one clock every timestamp comes from: monotonic, and system-wide on Linux,
    so a worker's timestamps and the parent's can be compared."""
    return time.perf_counter()


MAX_SEED = 2**32 - 1  # llama.cpp's sampler seeds are uint32


@dataclass(frozen=True)
class DecodeSettings:
    """Decoding with a token budget; `stop` strings end the output early.

    `constraint` (compiled beforehand with `Backend.compile_constraint`) restricts the
    output to a grammar; None decodes freely.

    `temperature` 0 (the default) is greedy decoding. Above 0 the backend samples from
    the temperature-scaled distribution over the whole vocabulary (no top-k, top-p or
    min-p cut), with a random generator seeded by `seed`: the same prompt, settings and
    seed give the same text. A backend that cannot sample must refuse with a clear
    error rather than decode greedily.

    `end` holds the policies that may end an answer early or close it (`answer_end`)."""

    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    constraint: ConstraintRequest | None = None
    temperature: float = 0.0
    seed: int = 0
    end: EndPolicy = field(default_factory=EndPolicy)
    # The prompt's leading text every example of its schema shares; a backend with a
    # prefix cache keeps its KV between requests (None: a fresh KV cache).
    prefix: str | None = None

    def __post_init__(self) -> None:
        if not self.temperature >= 0.0:  # also rejects NaN
            raise ValueError(f"temperature must be >= 0, not {self.temperature}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed must be between 0 and {MAX_SEED}, not {self.seed}")

    @property
    def sampling(self) -> bool:
        return self.temperature > 0.0


@dataclass
class Generation:
    """One model answer and the raw facts needed to time it.

    `generated_tokens` counts every token the model sampled, including an end-of-turn
    token that is not part of `text`; `output_tokens` counts the tokens of `text`.
    Decode speed is (generated_tokens - forced_prefix_tokens - 1) / (t_end - t_first_token):
    the tokens that appeared after the first sampled one.

    Under a grammar some tokens are forced (only one continuation is legal) and appended
    without sampling; `forced_tokens` counts them, `forced_prefix_tokens` those forced
    before the first sampled token (they are evaluated with the prompt), and
    `forward_passes` counts llama_decode calls after the prompt.
    """

    text: str
    prompt_tokens: int
    output_tokens: int
    generated_tokens: int
    finish_reason: FinishReason
    t_start: float
    t_first_token: float | None
    t_end: float
    error: str | None = None
    forced_tokens: int = 0
    forced_prefix_tokens: int = 0
    forward_passes: int | None = None
    # The runtime's own performance counters for this request, for cross-checks.
    runtime_counters: dict[str, float] = field(default_factory=dict)
    # Candidate tokens the keyword guard struck out, and times it had to give way.
    guard_vetoes: int = 0
    guard_dead_ends: int = 0
    # Output tokens up to the end of the first complete top-level JSON value (None: never
    # complete), whether or not the answer stopped there.
    answer_tokens: int | None = None
    # Closing at the budget (schema modes, `EndPolicy.close`): the text before closing,
    # the tokens the closing added, and whether the result is a whole value the engine
    # accepts.
    unclosed_text: str | None = None
    closing_tokens: int = 0
    closed: bool = False
    # Prompt tokens whose KV came from an earlier request (the prefix cache): not
    # evaluated for this one.
    cached_prompt_tokens: int = 0
    # Nanoseconds per call of each decode-loop phase (`step_clock`: mask, apply, guard,
    # advance, forced, sample, decode), for the runtimes that time them.
    step_ns: dict[str, list[int]] = field(default_factory=dict)


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

    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        """Build (or fetch from the in-memory cache) the grammar for `request`, timed.
        A grammar the engine cannot handle comes back as `ok=False` with its message."""
        ...

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation: ...

    def close(self) -> None: ...
