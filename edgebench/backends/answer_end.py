"""What ends an answer besides the model itself and the token budget: the policies a
deployment applies, named, recorded and measurable side by side.

- **stop at the complete JSON** (free modes): generation ends when the answer's first
  top-level JSON value is complete (`edgebench.scoring.jsonscan`), finish reason
  `json_complete`. Under a schema grammar the engine ends the value itself.
- **loop detection** (all modes): the last tokens repeat with a short period, finish
  reason `loop` (see `LoopRule`).
- **close at the budget** (schema modes): a budget hit or a loop becomes the shortest
  completion the schema allows, forced through the constraint engine (the decode loops
  do this; `edgebench.constraints.closing` writes the text).

`AnswerWatch` runs per request and sees every token; it also notes when the first value
was complete even when nothing stops there, so tokens spent after the answer are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgebench.runfolder.records import FINISH_JSON_COMPLETE, FINISH_LOOP
from edgebench.scoring.jsonscan import JsonValueScanner


@dataclass(frozen=True)
class LoopRule:
    """An answer loops when its last `max(min_tokens, min_repeats x p)` tokens repeat
    with a period p of at most `max_period` tokens: 32 identical tokens (`0000...`), 4
    copies of a 16-token item. Longer periods are left to the token budget."""

    max_period: int = 32
    min_tokens: int = 32
    min_repeats: int = 4

    def __post_init__(self) -> None:
        if self.max_period < 1 or self.min_tokens < 2 or self.min_repeats < 2:
            raise ValueError("loop rule: max_period >= 1, min_tokens >= 2, min_repeats >= 2")

    def span(self, period: int) -> int:
        """Tokens that must repeat with `period` before it counts as a loop."""
        return max(self.min_tokens, self.min_repeats * period)


# Closing writes the shortest value of every missing required key: a purchase order cut
# in its first field needs about 80 tokens. Forced tokens cost no model pass.
DEFAULT_CLOSE_TOKENS = 256


@dataclass(frozen=True)
class EndPolicy:
    """The answer-ending policies of one request (recorded in the run manifest)."""

    stop_at_json: bool = False
    loop: LoopRule | None = None
    close: bool = False  # schema modes: close a budget hit or a loop
    close_tokens: int = DEFAULT_CLOSE_TOKENS  # tokens the closing may add beyond the budget


class LoopDetector:
    """Per token O(max_period): for each period p, how many tokens in a row equal the
    token p before them."""

    def __init__(self, rule: LoopRule) -> None:
        self.rule = rule
        self.history: list[int] = []
        self.runs = [0] * (rule.max_period + 1)  # index p: matching run for period p

    def push(self, token: int) -> bool:
        """Add a token; True when the answer now loops."""
        history, runs, rule = self.history, self.runs, self.rule
        history.append(token)
        n = len(history)
        looping = False
        for period in range(1, min(rule.max_period, n - 1) + 1):
            if history[n - 1 - period] == token:
                runs[period] += 1
                if runs[period] + period >= rule.span(period):
                    looping = True
            else:
                runs[period] = 0
        return looping


@dataclass
class AnswerWatch:
    """One request's view of its answer, token by token: `push` says whether a policy
    ends it here and why."""

    policy: EndPolicy
    scanner: JsonValueScanner = field(default_factory=JsonValueScanner)
    loops: LoopDetector | None = None
    answer_tokens: int | None = None  # tokens until the first JSON value was complete
    tokens: int = 0

    def __post_init__(self) -> None:
        if self.policy.loop is not None:
            self.loops = LoopDetector(self.policy.loop)

    def push(self, token: int, piece: bytes) -> str | None:
        """Account one output token (its id and bytes); the finish reason when a policy
        ends the answer with it, else None."""
        self.tokens += 1
        if self.answer_tokens is None and self.scanner.feed(piece):
            self.answer_tokens = self.tokens
            if self.policy.stop_at_json:
                return FINISH_JSON_COMPLETE
        if self.loops is not None and self.loops.push(token):
            return FINISH_LOOP
        return None
