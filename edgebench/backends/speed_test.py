"""Prompt-processing and token-generation speed, measured the way llama-bench does.

`ppN`: N prompt tokens evaluated as one batch; `tgN`: N tokens evaluated one at a time.
Every repetition starts from an empty KV cache (filled to `depth` tokens first, untimed,
for `@ dD` rows). Token ids are drawn at random from the vocabulary with a fixed seed
(BOS first when the model adds one): the speed of a forward pass does not depend on
which tokens it sees. This runs inside the model's worker, so no inter-process
traffic falls into a timed interval.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from edgebench.backends.base import now
from edgebench.backends.speed import ProbeVocab, SpeedProbe, TimedProbe
from edgebench.errors import UserError
from edgebench.system.cpu_share import CpuMeter, CpuShare

PROMPT = "pp"
GENERATION = "tg"


@dataclass(frozen=True)
class SpeedTest:
    """One row of the bench: `kind` pp or tg, `n_tokens` timed, after `depth` tokens."""

    kind: str
    n_tokens: int
    depth: int = 0

    @property
    def name(self) -> str:
        base = f"{self.kind}{self.n_tokens}"
        return f"{base} @ d{self.depth}" if self.depth else base

    @property
    def context_needed(self) -> int:
        return self.depth + self.n_tokens


@dataclass(frozen=True)
class SpeedPlan:
    """The tests one worker runs, and how.

    Every test gets `warmup` untimed repetitions first; then the timed repetitions run
    round-robin over the tests (repetition 1 of every test, then repetition 2, ...), so
    a slow drift of the machine spreads over all rows instead of biasing the last."""

    tests: tuple[SpeedTest, ...]
    repetitions: int = 5
    warmup: int = 1
    seed: int = 42


@dataclass
class SpeedResult:
    """The timed repetitions of one test, each with the CPU share other processes
    (`cpu_others`) and other virtual machines (`cpu_steal`) took meanwhile."""

    test: SpeedTest
    seconds: list[float] = field(default_factory=list)
    cpu_others: list[float | None] = field(default_factory=list)
    cpu_steal: list[float | None] = field(default_factory=list)

    @property
    def tok_s(self) -> list[float]:
        return [self.test.n_tokens / s for s in self.seconds]

    def add(self, seconds: float, share: CpuShare) -> None:
        self.seconds.append(seconds)
        self.cpu_others.append(share.others)
        self.cpu_steal.append(share.steal)

    def extend(self, other: SpeedResult) -> None:
        """Append the repetitions of another measurement of the same test."""
        self.seconds += other.seconds
        self.cpu_others += other.cpu_others
        self.cpu_steal += other.cpu_steal

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test.name,
            **asdict(self.test),
            "repetitions": len(self.seconds),
            **rate_stats(self.tok_s),
            "cpu_others_max": _max(self.cpu_others),
            "cpu_steal_max": _max(self.cpu_steal),
            "seconds": self.seconds,
            "tok_s": self.tok_s,
            "cpu_others": self.cpu_others,
            "cpu_steal": self.cpu_steal,
        }


def _max(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def rate_stats(rates: list[float]) -> dict[str, float | None]:
    """Mean ± sample standard deviation (n-1, as llama-bench), its share of the mean,
    median and range. With one repetition there is no spread: std is None."""
    if not rates:
        return dict.fromkeys(("tok_s_mean", "tok_s_std", "tok_s_cv", "tok_s_median"))
    mean = statistics.fmean(rates)
    std = statistics.stdev(rates) if len(rates) > 1 else None
    return {
        "tok_s_mean": mean,
        "tok_s_std": std,
        "tok_s_cv": std / mean if std is not None and mean > 0 else None,
        "tok_s_median": statistics.median(rates),
        "tok_s_min": min(rates),
        "tok_s_max": max(rates),
    }


def draw_tokens(vocab: ProbeVocab, count: int, rng: random.Random, start: bool) -> list[int]:
    """`count` random token ids; the first is BOS when `start` and the model adds one."""
    tokens = [rng.randrange(vocab.size) for _ in range(count)]
    if start and vocab.bos is not None and tokens:
        tokens[0] = vocab.bos
    return tokens


def _one_repetition(
    probe: SpeedProbe | TimedProbe, test: SpeedTest, prefix: list[int], timed: list[int], clock: Any
) -> float:
    if not isinstance(probe, SpeedProbe):  # the runtime's own counters time it
        return probe.probe_time(test.kind, prefix, timed)
    probe.probe_clear()
    if prefix:
        probe.probe_eval(prefix)
    if test.kind == PROMPT:
        start = clock()
        probe.probe_eval(timed)
        return clock() - start
    start = clock()
    for token in timed:
        probe.probe_eval((token,))
    return clock() - start


def measure_speed(
    probe: SpeedProbe | TimedProbe, plan: SpeedPlan, clock: Callable[[], float] = now
) -> list[SpeedResult]:
    """Run `plan` on a loaded backend; the results come in the plan's test order."""
    if not isinstance(probe, SpeedProbe | TimedProbe):
        name = getattr(probe, "name", type(probe).__name__)
        raise UserError(f"the {name} backend cannot run `edgebench bench` (no speed probe)")
    vocab = probe.probe_vocab()
    rng = random.Random(plan.seed)
    inputs = []
    for test in plan.tests:
        prefix = draw_tokens(vocab, test.depth, rng, start=True)
        timed = draw_tokens(vocab, test.n_tokens, rng, start=not prefix)
        inputs.append((test, prefix, timed))
    for test, prefix, timed in inputs:
        for _ in range(plan.warmup):
            _one_repetition(probe, test, prefix, timed, clock)
    results = [SpeedResult(test) for test in plan.tests]
    meter = CpuMeter()
    for _ in range(plan.repetitions):
        for result, (test, prefix, timed) in zip(results, inputs, strict=True):
            before = meter.snapshot()
            seconds = _one_repetition(probe, test, prefix, timed, clock)
            result.add(seconds, meter.share(before, meter.snapshot()))
    if isinstance(probe, SpeedProbe):
        probe.probe_clear()
    return results
