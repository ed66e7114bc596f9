"""A backend for tests: queued outputs and fixed timings, no model."""

from __future__ import annotations

import os
import signal
from collections import deque
from dataclasses import dataclass

from edgebench.backends.base import (
    FINISH_LENGTH,
    FINISH_STOP,
    DecodeSettings,
    Generation,
    LoadInfo,
)
from edgebench.constraints.spec import CompileReport, ConstraintRequest


@dataclass(frozen=True)
class FakeTimings:
    """Seconds charged per prompt token and per generated token."""

    per_prompt_token: float = 0.001
    per_output_token: float = 0.01
    compile_first: float = 0.005  # seconds reported for compiling a new constraint


class FakeBackend:
    """Answers with queued texts (one word = one token), on a virtual clock.

    When the queue runs dry it answers `default_output`. Timestamps advance a virtual
    clock, so every figure the runner derives is exact and known in advance.
    """

    name = "fake"

    def __init__(
        self,
        outputs: list[str] | None = None,
        *,
        default_output: str = "{}",
        timings: FakeTimings | None = None,
        crash_marker: str | None = None,
        unsupported: dict[str, str] | None = None,
    ) -> None:
        self.queue: deque[str] = deque(outputs or [])
        self.default_output = default_output
        self.timings = timings or FakeTimings()
        self.clock = 1000.0
        self.prompts: list[str] = []
        # A prompt containing this text kills the process with SIGSEGV, as a native
        # crash in a runtime would (used to test worker isolation).
        self.crash_marker = crash_marker
        # schema label -> the engine message for a constraint this fake cannot compile
        self.unsupported = unsupported or {}
        self.compiled: dict[str, CompileReport] = {}
        self.constraints: list[str | None] = []  # the mode of every generate call

    @staticmethod
    def _tokens(text: str) -> list[str]:
        return text.split()

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return [len(self._tokens(p)) for p in prompts]

    def load(self, n_ctx: int) -> LoadInfo:
        return LoadInfo(n_ctx=n_ctx, runtime={"name": "fake"})

    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        if request.key in self.compiled:
            return self.compiled[request.key].as_cached(0.0)
        message = self.unsupported.get(request.label)
        report = CompileReport.new(
            request, "fake", error=message, seconds=self.timings.compile_first
        )
        self.compiled[request.key] = report
        return report

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        self.prompts.append(prompt)
        self.constraints.append(settings.constraint.mode if settings.constraint else None)
        if self.crash_marker is not None and self.crash_marker in prompt:
            os.kill(os.getpid(), signal.SIGSEGV)
        text = self.queue.popleft() if self.queue else self.default_output
        tokens = self._tokens(text)
        finish = FINISH_STOP
        if len(tokens) > settings.max_tokens:
            tokens, finish = tokens[: settings.max_tokens], FINISH_LENGTH
        # An answer that ended by itself also sampled an end-of-turn token.
        generated = len(tokens) + (1 if finish == FINISH_STOP else 0)
        prompt_tokens = len(self._tokens(prompt))
        t_start = self.clock
        t_first = t_start + prompt_tokens * self.timings.per_prompt_token
        t_end = t_first + max(generated - 1, 0) * self.timings.per_output_token
        self.clock = t_end + 1.0
        return Generation(
            # Verbatim unless cut, so tests can queue any text (newlines, fences).
            text=text if finish == FINISH_STOP else " ".join(tokens),
            prompt_tokens=prompt_tokens,
            output_tokens=len(tokens),
            generated_tokens=generated,
            finish_reason=finish,
            t_start=t_start,
            t_first_token=t_first if generated else None,
            t_end=t_end,
        )

    def close(self) -> None:
        pass
