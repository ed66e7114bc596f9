"""Where a decode step's time goes, token by token: computing the grammar mask, applying
it to the logits (the legal tokens and the best of them), the keyword guard, and the
model's forward pass (llama_decode). MaskBench reports the time between masks the same
way: one duration per generated token, summarised as p50/p99. Forced tokens are
evaluated with the token before them in one forward pass and need no mask of their own:
phases count calls, not tokens.

The clock is two `perf_counter_ns` calls around each phase and one list append; its
own cost per token is measured in `benchmarks/constrained_overhead.py` (well under a
microsecond, against milliseconds for a forward pass)."""

from __future__ import annotations

from time import perf_counter_ns

# The phases a decode loop may time; a runtime times the ones it has.
MASK = "mask"  # the grammar engine computing the allowed tokens
ADVANCE = "advance"  # the grammar engine taking the chosen token
FORCED = "forced"  # the grammar engine finding (and taking) the tokens it forces next
APPLY = "apply"  # reading the mask: the allowed tokens' logits and the best of them
GUARD = "guard"  # the keyword guard choosing among the allowed tokens
DECODE = "decode"  # the model's forward pass over the token(s) just chosen
SAMPLE = "sample"  # a runtime's own sampler chain (llama.cpp: greedy, or its grammar)
PHASES = (MASK, APPLY, GUARD, ADVANCE, FORCED, SAMPLE, DECODE)

clock = perf_counter_ns


class StepClock:
    """Nanoseconds per call of each phase, in call order."""

    def __init__(self) -> None:
        self.ns: dict[str, list[int]] = {}

    def add(self, phase: str, start_ns: int) -> None:
        """Record one call of `phase` that began at `start_ns` (from `clock()`)."""
        elapsed = perf_counter_ns() - start_ns
        samples = self.ns.get(phase)
        if samples is None:
            self.ns[phase] = [elapsed]
        else:
            samples.append(elapsed)
