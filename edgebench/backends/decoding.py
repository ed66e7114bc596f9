"""Decode-loop pieces every runtime shares: what a request produced so far, greedy (or
seeded sampled) decoding under an llguidance token mask (the `mask` constraint), and
the seeded draw that sampling uses where a runtime picks tokens itself.

A runtime plugs in two callbacks, `evaluate(tokens)` (run the model on tokens appended to
its KV cache) and `logits()` (scores of the last evaluated position), and gets the same
token choices, fast-forwarding, guard and accounting as every other runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from edgebench.backends.answer_end import AnswerWatch, EndPolicy
from edgebench.backends.base import DecodeSettings, Generation, now
from edgebench.backends.step_clock import (
    ADVANCE,
    APPLY,
    DECODE,
    FORCED,
    GUARD,
    MASK,
    StepClock,
    clock,
)
from edgebench.constraints.closing import shortest_completion
from edgebench.constraints.guard import KeywordGuard, TokenGuard
from edgebench.constraints.llguidance_mask import TokenMask
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.errors import UserError
from edgebench.runfolder.records import FINISH_LENGTH, FINISH_STOP


class _HasReport(Protocol):
    report: CompileReport


C = TypeVar("C", bound=_HasReport)


class CompiledConstraints(Generic[C]):
    """A worker's compiled constraints by request key: each compiled once (timed from the
    request to a grammar ready to decode with), later requests served from memory."""

    def __init__(self, mode: str, build: Callable[[ConstraintRequest], C]) -> None:
        self.mode = mode
        self.build = build
        self.entries: dict[str, C] = {}

    def compile(self, request: ConstraintRequest) -> CompileReport:
        if request.mode != self.mode:
            raise ValueError(f"this worker decodes under '{self.mode}', not '{request.mode}'")
        start = now()
        known = self.entries.get(request.key)
        if known is not None:
            return known.report.as_cached(now() - start)
        compiled = self.build(request)
        compiled.report = replace(compiled.report, seconds=now() - start)
        self.entries[request.key] = compiled
        return compiled.report

    def usable(self, request: ConstraintRequest) -> C:
        """The compiled constraint for `request` (compiled now if new); a RuntimeError
        when the engine refused it."""
        if request.key not in self.entries:
            self.compile(request)
        compiled = self.entries[request.key]
        if not compiled.report.ok:
            raise RuntimeError(f"constraint {request.label} unsupported: {compiled.report.error}")
        return compiled


def schema_guard(
    schema: dict[str, Any] | None, enabled: bool
) -> tuple[TokenGuard | None, tuple[str, ...]]:
    """The keyword guard for a schema mode, and the keyword sites it enforces (none when
    disabled or when the schema has nothing for it to enforce)."""
    if not enabled or schema is None:
        return None, ()
    guard = KeywordGuard(schema)
    return (TokenGuard(guard), guard.keywords) if guard.active else (None, ())


@dataclass
class DecodeState:
    """What one request produced so far."""

    out: bytearray = field(default_factory=bytearray)
    output_tokens: int = 0
    generated: int = 0  # tokens sampled or forced, end-of-text included
    forced: int = 0
    forced_prefix: int = 0
    passes: int = 0  # model evaluations after the prompt
    finish: str = FINISH_LENGTH
    error: str | None = None
    t_first: float | None = None
    watch: AnswerWatch | None = None  # the answer-ending policies, token by token
    unclosed: bytes | None = None  # the text before closing, once closing began
    closing_tokens: int = 0
    closed: bool = False
    steps: StepClock = field(default_factory=StepClock)  # time per phase of each step

    @classmethod
    def under(cls, policy: EndPolicy) -> DecodeState:
        """A fresh state whose tokens go through `policy`."""
        return cls(watch=AnswerWatch(policy))

    def emit(self, token: int, piece: bytes) -> bool:
        """Append one output token; True when a policy ends the answer with it (the
        finish reason is then set)."""
        self.out += piece
        self.output_tokens += 1
        if self.watch is None:
            return False
        reason = self.watch.push(token, piece)
        if reason is None:
            return False
        self.finish = reason
        return True

    def sampled(self) -> None:
        """Count one sampled token; the first one stamps time to first token."""
        self.generated += 1
        if self.t_first is None:
            self.t_first = now()

    def generation(
        self,
        prompt_tokens: int,
        t_start: float,
        t_end: float,
        runtime_counters: dict[str, float],
        guard: TokenGuard | None = None,
    ) -> Generation:
        """The record of this request, the same for every runtime."""
        return Generation(
            text=self.out.decode("utf-8", "replace"),
            prompt_tokens=prompt_tokens,
            output_tokens=self.output_tokens,
            generated_tokens=self.generated,
            finish_reason=self.finish,
            t_start=t_start,
            t_first_token=self.t_first,
            t_end=t_end,
            error=self.error,
            forced_tokens=self.forced,
            forced_prefix_tokens=self.forced_prefix,
            forward_passes=self.passes,
            runtime_counters=runtime_counters,
            guard_vetoes=guard.guard.vetoes if guard is not None else 0,
            guard_dead_ends=guard.guard.dead_ends if guard is not None else 0,
            answer_tokens=self.watch.answer_tokens if self.watch is not None else None,
            unclosed_text=self.unclosed.decode("utf-8", "replace")
            if self.unclosed is not None
            else None,
            closing_tokens=self.closing_tokens,
            closed=self.closed,
            step_ns=self.steps.ns,
        )


Draw = Callable[[np.ndarray], int]  # scores (-inf: refused) -> index of the chosen one


def softmax_draw(temperature: float, seed: int) -> Draw:
    """Sampling for `DecodeSettings(temperature, seed)` where edgebench picks tokens:
    an index drawn from softmax(scores / temperature) over the finite scores, with
    numpy's PCG64 seeded by `seed` (one generator per request, so a request is
    reproducible). All scores -inf: the first index, as argmax would give."""
    rng = np.random.default_rng(seed)

    def draw(scores: np.ndarray) -> int:
        finite = np.isfinite(scores)
        if not finite.any():
            return int(np.argmax(scores))
        scaled = np.where(finite, scores.astype(np.float64) / temperature, -np.inf)
        weights = np.exp(scaled - scaled[finite].max())
        return int(rng.choice(len(weights), p=weights / weights.sum()))

    return draw


@dataclass(frozen=True)
class Closing:
    """How a schema-mode decode closes an answer cut off by its budget or a loop: the
    shortest completion of the text so far (`constraints.closing`), tokenized to be
    forced through the engine; at most `max_tokens` tokens."""

    schema: dict[str, Any] | None
    tokenize: Callable[[str], list[int]]
    max_tokens: int

    def tokens(self, text: bytes) -> list[int]:
        suffix = shortest_completion(text.decode("utf-8", "replace"), self.schema)
        return self.tokenize(suffix) if suffix else []


def closing_for(settings: DecodeSettings, tokenize: Callable[[str], list[int]]) -> Closing | None:
    """Closing at the budget for a schema request whose policy asks for it, else None."""
    request = settings.constraint
    if not settings.end.close or request is None or request.schema is None:
        return None
    return Closing(request.schema, tokenize, settings.end.close_tokens)


def require_fit(prompt_tokens: int, settings: DecodeSettings, n_ctx: int) -> None:
    """A one-line error when the prompt, the budget and the closing room exceed n_ctx."""
    room = settings.end.close_tokens if settings.end.close else 0
    if prompt_tokens + settings.max_tokens + room > n_ctx:
        raise UserError(
            f"prompt of {prompt_tokens} tokens + max_tokens {settings.max_tokens} "
            + (f"+ {room} closing tokens " if room else "")
            + f"does not fit n_ctx {n_ctx}"
        )


@dataclass
class MaskedGreedy:
    """Greedy decoding under an llguidance matcher: the best logit among the tokens the
    grammar allows (and the keyword guard, when there is one); tokens the grammar forces
    are appended without sampling and evaluated in one batch with the token before them.

    `piece(token)` gives a token's bytes; `is_end(token)` says whether it ends the text
    (end-of-generation tokens); `eos` is the token the grammar uses to end. With `draw`
    (see `softmax_draw`) the legal tokens are sampled instead of taking the best. With
    `closing`, an answer that hits its budget or loops is closed (`_close`)."""

    matcher: Any
    mask: TokenMask
    piece: Callable[[int], bytes]
    is_end: Callable[[int], bool]
    eos: int
    guard: TokenGuard | None = None
    fast_forward: bool = True
    draw: Draw | None = None
    closing: Closing | None = None

    def run(
        self,
        prompt: list[int],
        evaluate: Callable[[list[int]], None],
        logits: Callable[[], np.ndarray],
        max_tokens: int,
        state: DecodeState,
    ) -> None:
        matcher = self.matcher
        matcher.reset()
        if self.guard is not None:
            self.guard.reset()
        pending, ended = self._forced(max_tokens, state)
        state.forced_prefix = len(pending)
        evaluate(prompt + pending)
        unevaluated: list[int] = []
        while not ended and state.output_tokens < max_tokens:
            token = self._next(logits, state)
            if token is None:
                state.finish = FINISH_STOP
                return
            ended = state.emit(token, self.piece(token))
            forced: list[int] = []
            if not ended and state.output_tokens < max_tokens:
                forced, ended = self._forced(max_tokens, state)
            unevaluated = [token, *forced]
            if ended or state.output_tokens >= max_tokens:
                break
            start = clock()
            evaluate(unevaluated)
            state.steps.add(DECODE, start)
            unevaluated = []
            state.passes += 1
        if self.closing is not None:
            self._close(self.closing, unevaluated, evaluate, logits, state)

    def _next(self, logits: Callable[[], np.ndarray], state: DecodeState) -> int | None:
        """The next token, counted as sampled and consumed by the matcher; None when the
        answer ends here (the grammar is complete, or an end token was chosen)."""
        matcher, mask, steps = self.matcher, self.mask, state.steps
        start = clock()
        mask.fill(matcher)
        steps.add(MASK, start)
        if matcher.is_error():
            raise RuntimeError(f"llguidance: {matcher.get_error()}")
        if matcher.is_accepting() and mask.allows_only(self.eos):
            return None  # the object is complete: only end-of-text is legal, no pass needed
        token = self._choose(logits(), mask, steps)
        state.sampled()
        if token == self.eos or self.is_end(token):
            return None
        start = clock()
        consumed = matcher.consume_token(token)
        steps.add(ADVANCE, start)
        if not consumed:
            raise RuntimeError(f"llguidance refused token {token}: {matcher.get_error()}")
        return token

    def _close(
        self,
        closing: Closing,
        unevaluated: list[int],
        evaluate: Callable[[list[int]], None],
        logits: Callable[[], np.ndarray],
        state: DecodeState,
    ) -> None:
        """Turn the cut-off answer into the shortest whole value the engine accepts: the
        tokens of `shortest_completion` as far as the matcher takes them; where it refuses
        (a pattern, a format), the model's best allowed token, then the completion of
        that text again."""
        matcher = self.matcher
        state.unclosed = bytes(state.out)
        if state.watch is not None:
            state.watch.loops = None  # closing text is not a loop
        while state.closing_tokens < closing.max_tokens and not matcher.is_accepting():
            suggested = closing.tokens(bytes(state.out))
            room = closing.max_tokens - state.closing_tokens
            taken = matcher.validate_tokens(suggested[:room]) if suggested else 0
            if taken:
                chosen = suggested[:taken]
                if not matcher.consume_tokens(chosen):
                    raise RuntimeError(f"llguidance refused closing tokens: {matcher.get_error()}")
                state.generated += taken
                state.forced += taken
            else:  # the engine wants something else here: the model picks
                if unevaluated:
                    start = clock()
                    evaluate(unevaluated)
                    state.steps.add(DECODE, start)
                    state.passes += 1
                    unevaluated = []
                token = self._next(logits, state)
                if token is None:
                    break
                chosen = [token]
            for token in chosen:
                piece = self.piece(token)
                state.emit(token, piece)
                if self.guard is not None:
                    self.guard.force_piece(piece)
            state.closing_tokens += len(chosen)
            unevaluated += chosen
        if state.closing_tokens == 0:  # whole already: nothing was closed
            state.unclosed = None
            return
        state.closed = matcher.is_accepting()

    def _choose(self, logits: np.ndarray, mask: TokenMask, steps: StepClock) -> int:
        start = clock()
        allowed = np.flatnonzero(mask.allowed())
        if allowed.size == 0:
            raise RuntimeError("llguidance allows no token")
        scores = logits[allowed]  # a copy: the guard may strike tokens out
        if self.guard is None:
            best = np.argmax(scores) if self.draw is None else self.draw(scores)
            steps.add(APPLY, start)
            return int(allowed[best])
        steps.add(APPLY, start)
        start = clock()
        token = self.guard.pick(scores, allowed, self.piece, self._ends, self.draw)
        steps.add(GUARD, start)
        return token

    def _ends(self, token: int) -> bool:
        return token == self.eos or self.is_end(token)

    def _forced(self, max_tokens: int, state: DecodeState) -> tuple[list[int], bool]:
        """Tokens the grammar forces next (within the budget), consumed and appended;
        and whether a policy ended the answer on one of them."""
        if not self.fast_forward:
            return [], False
        start = clock()
        forced = self.matcher.compute_ff_tokens()[: max_tokens - state.output_tokens]
        consumed = not forced or self.matcher.consume_tokens(forced)
        state.steps.add(FORCED, start)
        if not forced:
            return [], False
        if not consumed:
            raise RuntimeError(f"llguidance refused its forced tokens: {self.matcher.get_error()}")
        ended = False
        for token in forced:
            piece = self.piece(token)
            ended = state.emit(token, piece) or ended
            if self.guard is not None:
                self.guard.force_piece(piece)
        state.generated += len(forced)
        state.forced += len(forced)
        return forced, ended
