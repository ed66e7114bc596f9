"""A backend for tests: queued outputs (or seeded draws when sampling) and fixed
timings, no model."""

from __future__ import annotations

import os
import random
import re
import signal
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edgebench.backends.answer_end import AnswerWatch
from edgebench.backends.base import DecodeSettings, Generation, LoadInfo
from edgebench.backends.speed import ProbeVocab
from edgebench.constraints.closing import shortest_completion
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.runfolder.records import FINISH_LENGTH, FINISH_LOOP, FINISH_STOP


@dataclass(frozen=True)
class FakeTimings:
    """Seconds charged per prompt token and per generated token."""

    per_prompt_token: float = 0.001
    per_output_token: float = 0.01
    compile_first: float = 0.005  # seconds reported for compiling a new constraint
    per_mask: float = 0.00005  # seconds per token mask (constrained requests)


# What a prompt marker makes the fake do, as a misbehaving runtime would.
FAULTS = ("SIGSEGV", "SIGABRT", "SIGKILL", "hang")


class FakeBackend:
    """Answers with queued texts (one word = one token), on a virtual clock.

    When the queue runs dry it answers `default_output`, or with `echo` the prompt's first
    line (an answer that does not depend on which worker gives it, for restart and
    resume tests). Timestamps advance a virtual clock, so every figure the runner derives
    is exact and known in advance; `delay_s` adds real sleep per answer (Ctrl-C tests).
    """

    name = "fake"

    def __init__(
        self,
        outputs: list[str] | None = None,
        *,
        default_output: str = "{}",
        timings: FakeTimings | None = None,
        crash_marker: str | None = None,
        faults: dict[str, str] | None = None,
        compile_faults: dict[str, str] | None = None,
        unsupported: dict[str, str] | None = None,
        sampled: list[str] | None = None,
        echo: bool = False,
        delay_s: float = 0.0,
        system_info: str | None = None,
    ) -> None:
        self.queue: deque[str] = deque(outputs or [])
        self.default_output = default_output
        self.timings = timings or FakeTimings()
        self.clock = 1000.0
        self.prompts: list[str] = []
        # A prompt containing this text kills the process with SIGSEGV, as a native
        # crash in a runtime would (used to test worker isolation).
        self.crash_marker = crash_marker
        # prompt marker -> one of FAULTS: a signal the process sends itself, or a hang
        self.faults = dict(faults or {})
        if crash_marker is not None:
            self.faults[crash_marker] = "SIGSEGV"
        unknown = {*self.faults.values(), *(compile_faults or {}).values()} - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault {sorted(unknown)[0]!r} (known: {FAULTS})")
        # schema label -> one of FAULTS, when compiling that schema's constraint
        self.compile_faults = compile_faults or {}
        self.echo = echo
        self.delay_s = delay_s
        # schema label -> the engine message for a constraint this fake cannot compile
        self.unsupported = unsupported or {}
        self.compiled: dict[str, CompileReport] = {}
        self.constraints: list[str | None] = []  # the mode of every generate call
        self.settings: list[DecodeSettings] = []  # every generate call's settings
        # With temperature > 0, answers drawn from these by a generator seeded with the
        # seed, temperature and prompt (the same seed gives the same answer).
        self.sampled = sampled
        self.n_ctx = 0
        self.cached = 0  # tokens in the (pretend) KV cache
        self.evaluated: list[list[int]] = []  # every probe_eval call
        # what llama.cpp's llama_print_system_info() would say, in the build it reports
        self.system_info = system_info

    @staticmethod
    def _tokens(text: str) -> list[str]:
        return text.split()

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return [len(self._tokens(p)) for p in prompts]

    def load(self, n_ctx: int) -> LoadInfo:
        self.n_ctx = n_ctx
        build: dict[str, Any] = {"name": "fake"}
        if self.system_info is not None:
            build["system_info"] = self.system_info
        return LoadInfo(n_ctx=n_ctx, runtime={"name": "fake", "build": build})

    # -- speed probe: a batch costs per_prompt_token per token, one token per_output_token
    VOCAB = ProbeVocab(size=1000, bos=1)

    def probe_vocab(self) -> ProbeVocab:
        return self.VOCAB

    def probe_clear(self) -> None:
        self.cached = 0

    def probe_eval(self, tokens: Sequence[int]) -> None:
        self.evaluated.append(list(tokens))
        self.cached += len(tokens)
        if self.cached > self.n_ctx:
            raise RuntimeError(f"{self.cached} tokens do not fit n_ctx {self.n_ctx}")
        per_token = self.timings.per_output_token
        if len(tokens) > 1:
            per_token = self.timings.per_prompt_token
        self.clock += len(tokens) * per_token

    def virtual_clock(self) -> float:
        return self.clock

    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        if request.key in self.compiled:
            return self.compiled[request.key].as_cached(0.0)
        if request.label in self.compile_faults:
            _misbehave(self.compile_faults[request.label])
        message = self.unsupported.get(request.label)
        report = CompileReport.new(
            request, "fake", error=message, seconds=self.timings.compile_first
        )
        self.compiled[request.key] = report
        return report

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        self.prompts.append(prompt)
        self.constraints.append(settings.constraint.mode if settings.constraint else None)
        self.settings.append(settings)
        for marker, fault in self.faults.items():
            if marker in prompt:
                _misbehave(fault)
        if self.delay_s:
            time.sleep(self.delay_s)
        if settings.sampling and self.sampled:
            draw = random.Random(f"{settings.seed}|{settings.temperature}|{prompt}")
            text = self.sampled[draw.randrange(len(self.sampled))]
        elif self.queue:
            text = self.queue.popleft()
        else:
            text = prompt.strip().split("\n", 1)[0] if self.echo else self.default_output
        tokens = self._tokens(text)
        finish = FINISH_STOP
        watched = _watched(text, settings)
        if watched.ended_at is not None and watched.ended_at <= settings.max_tokens:
            finish, text, tokens = watched.reason, watched.text, tokens[: watched.ended_at]
        elif len(tokens) > settings.max_tokens:
            tokens, finish = tokens[: settings.max_tokens], FINISH_LENGTH
            text = " ".join(tokens)
        answer_tokens = watched.answer_tokens
        if answer_tokens is not None and answer_tokens > len(tokens):
            answer_tokens = None
        # An answer that ended by itself also sampled an end-of-turn token.
        generated = len(tokens) + (1 if finish == FINISH_STOP else 0)
        unclosed, closing = None, ""
        request = settings.constraint
        if settings.end.close and request is not None and finish in (FINISH_LENGTH, FINISH_LOOP):
            closing = shortest_completion(text, request.schema)
            unclosed = text if closing else None
        closing_tokens = len(self._tokens(closing))
        prompt_tokens = len(self._tokens(prompt))
        t_start = self.clock
        t_first = t_start + prompt_tokens * self.timings.per_prompt_token
        t_end = t_first + max(generated + closing_tokens - 1, 0) * self.timings.per_output_token
        self.clock = t_end + 1.0
        # One forward pass per token after the first; a mask per sampled token when
        # constrained (the fake's steps fit inside its decode interval only as figures).
        steps = generated + closing_tokens
        step_ns = {"decode": [round(self.timings.per_output_token * 1e9)] * max(steps - 1, 0)}
        if request is not None:
            step_ns["mask"] = [round(self.timings.per_mask * 1e9)] * steps
        return Generation(
            # Verbatim unless cut at the budget, so tests can queue any text (newlines,
            # fences); a closed answer is followed by its closing text.
            text=text + closing,
            prompt_tokens=prompt_tokens,
            output_tokens=len(tokens) + closing_tokens,
            generated_tokens=generated + closing_tokens,
            finish_reason=finish,
            t_start=t_start,
            t_first_token=t_first if generated else None,
            t_end=t_end,
            answer_tokens=answer_tokens,
            unclosed_text=unclosed,
            closing_tokens=closing_tokens,
            closed=unclosed is not None,
            step_ns={k: v for k, v in step_ns.items() if v},
        )

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class _Watched:
    """What the answer-ending policies made of a queued answer, word by word."""

    reason: str | None  # the policy that ended it
    ended_at: int | None  # words up to the end (None: no policy ended it)
    text: str  # the verbatim text up to that word
    answer_tokens: int | None  # words until the first JSON value was complete


def _watched(text: str, settings: DecodeSettings) -> _Watched:
    watch = AnswerWatch(settings.end)
    previous_end = 0
    for count, word in enumerate(re.finditer(r"\S+", text), start=1):
        piece = text[previous_end : word.end()].encode("utf-8")
        previous_end = word.end()
        reason = watch.push(hash(word.group()), piece)
        if reason is not None:
            return _Watched(reason, count, text[:previous_end], watch.answer_tokens)
    return _Watched(None, None, text, watch.answer_tokens)


def _misbehave(fault: str) -> None:
    if fault == "hang":
        while True:  # a runtime stuck in a loop, deaf to the pipe
            time.sleep(3600)
    os.kill(os.getpid(), getattr(signal, fault))


class FakeLogits:
    """Teacher forcing's model for tests (backends/teacher_forcing.py): one word = one
    token, and at position i the logits row `rows[i % len(rows)]` given for this model
    path (`logits`: model path -> rows); a path not listed gets uniform logits."""

    def __init__(
        self,
        model_path: str,
        logits: dict[str, list[list[float]]] | None = None,
        vocab: int = 3,
        *,
        n_threads: int = 1,  # logits_model's contract; the fake has no threads to set
    ) -> None:
        self.rows = (logits or {}).get(model_path) or [[0.0] * vocab]
        self.loaded_n_ctx: int | None = None

    def tokenize(self, text: str, special: bool) -> list[int]:
        return [len(word) for word in text.split()]

    def load(self, n_ctx: int) -> None:
        self.loaded_n_ctx = n_ctx

    def n_vocab(self) -> int:
        return len(self.rows[0])

    def logits(self, tokens: list[int], first: int) -> Any:
        import numpy as np

        if self.loaded_n_ctx is None or len(tokens) > self.loaded_n_ctx:
            raise RuntimeError(f"{len(tokens)} tokens do not fit n_ctx {self.loaded_n_ctx}")
        rows = [self.rows[i % len(self.rows)] for i in range(first, len(tokens))]
        return np.asarray(rows, dtype=np.float32)

    def close(self) -> None:
        pass
