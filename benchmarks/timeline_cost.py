"""What does the 1 Hz timeline sampler cost the decode speed?

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/timeline_cost.py [--pairs 24]
       [--tokens 96] [--threads 2] [--interval 1.0]

The default model (SmolLM2-135M) is loaded once, in this process, and the same greedy
decode runs in pairs: once without and once with the sampler (`runner/timeline.py`, the
thread `edgebench run` starts; it reads this machine's heat and power sources and appends
fsynced rows to a scratch timeline.jsonl), the order swapped every pair. A pair's two
decodes are seconds apart, so its ratio (with / without) cancels the slow swings of a
shared machine; the median pair ratio is the figure, the totals are shown beside it. In a
run the sampler lives in the orchestrating process and the model in a worker, so sharing
one process here is the worse case (the sampler's thread competes for the GIL with
llama-cpp-python's loop). `--interval 0.01` samples 100 times as often.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path

from edgebench.backends.base import DecodeSettings
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.runner.prepare import model_under_test
from edgebench.runner.timeline import Timeline
from edgebench.system.device import device_info
from edgebench.system.power import choose_power_source

PROMPT = "List the planets of the solar system with one sentence about each:\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    model = model_under_test(None)
    backend = LlamaCppBackend(str(model.path), n_threads=args.threads)
    backend.load(512)
    settings = DecodeSettings(max_tokens=args.tokens)
    backend.generate(PROMPT, DecodeSettings(max_tokens=8))  # warm-up
    totals = {False: [0, 0.0], True: [0, 0.0]}  # sampler on? -> [decode tokens, seconds]
    ratios: list[float] = []
    rows = 0
    scratch = Path(tempfile.mkdtemp(prefix="edgebench-timeline-cost-"))
    source = choose_power_source().source

    def decode(sampled: bool) -> float:
        """One decode, the sampler running through it or not: its decode tok/s."""
        nonlocal rows
        timeline = Timeline(scratch, source, interval=args.interval) if sampled else None
        if timeline is not None:
            timeline.open(resumed=False)
            timeline.start()
        gen = backend.generate(PROMPT, settings)
        if timeline is not None:
            timeline.stop()
            rows += timeline.rows
        assert gen.t_first_token is not None
        tokens = gen.generated_tokens - gen.forced_prefix_tokens - 1
        seconds = gen.t_end - gen.t_first_token
        totals[sampled][0] += tokens
        totals[sampled][1] += seconds
        return tokens / seconds

    for pair in range(args.pairs):
        order = (False, True) if pair % 2 == 0 else (True, False)
        speed = {sampled: decode(sampled) for sampled in order}
        ratios.append(speed[True] / speed[False])
    backend.close()
    device = device_info(args.threads)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {device.cpu_model} · "
        f"{platform.platform()} · {args.threads} threads · {model.label}"
    )
    print(
        f"{args.pairs} pairs of {args.tokens}-token decodes; sampler interval "
        f"{args.interval:g} s, {rows} timeline rows written"
    )
    print("| sampler | decode tokens | decode s | decode tok/s |")
    print("|---|---|---|---|")
    for sampled, label in ((False, "off"), (True, "on")):
        tokens, seconds = totals[sampled]
        print(f"| {label} | {tokens} | {seconds:.2f} | {tokens / seconds:.1f} |")
    median = statistics.median(ratios)
    low, high = (statistics.quantiles(ratios, n=4)[i] for i in (0, 2))
    total = (totals[True][0] / totals[True][1]) / (totals[False][0] / totals[False][1])
    print(
        f"pair ratio on/off: median {median:.4f} (quartiles {low:.4f}-{high:.4f}; cost "
        f"{100 * (1 - median):+.2f}%); ratio of the totals {total:.4f}"
    )


if __name__ == "__main__":
    main()
