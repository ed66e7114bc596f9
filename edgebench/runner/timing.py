"""Per-example speed figures, computed one way for every backend from raw timestamps."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from edgebench.backends.base import Generation


@dataclass(frozen=True)
class Timings:
    """TTFT covers tokenization and prefill up to the first sampled token; decode covers
    every later forward pass. Rates are None when their interval is empty."""

    ttft_s: float | None
    latency_s: float
    prefill_tok_s: float | None
    decode_tok_s: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compute_timings(gen: Generation) -> Timings:
    latency = gen.t_end - gen.t_start
    if gen.t_first_token is None:
        return Timings(ttft_s=None, latency_s=latency, prefill_tok_s=None, decode_tok_s=None)
    ttft = gen.t_first_token - gen.t_start
    prefill = gen.prompt_tokens / ttft if ttft > 0 else None
    decode_time = gen.t_end - gen.t_first_token
    # Tokens forced before the first sampled one were evaluated with the prompt.
    decode_steps = gen.generated_tokens - gen.forced_prefix_tokens - 1
    decode = decode_steps / decode_time if decode_steps > 0 and decode_time > 0 else None
    return Timings(ttft_s=ttft, latency_s=latency, prefill_tok_s=prefill, decode_tok_s=decode)
