"""What does the 1 Hz timeline sampler cost the decode speed?

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/timeline_cost.py [--rounds 6]
       [--decodes 4] [--tokens 96] [--threads 2] [--interval 1.0]

The default model (SmolLM2-135M) is loaded once, in this process, and the same greedy
decodes run in alternating blocks without and with the sampler (`runner/timeline.py`,
the thread `edgebench run` starts; it reads this machine's heat and power sources and
appends fsynced rows to a scratch timeline.jsonl). In a run the sampler lives in the
orchestrating process and the model in a worker, so sharing one process here is the
worse case (the sampler's thread competes for the GIL with llama-cpp-python's loop).
Printed: decode tok/s (decode tokens over decode seconds of every block) each way, and
their ratio; `--interval 0.01` shows the cost of sampling 100 times as often.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

from edgebench.backends.base import DecodeSettings
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.runner.prepare import model_under_test
from edgebench.runner.samples import compute_timings
from edgebench.runner.timeline import Timeline
from edgebench.system.device import device_info
from edgebench.system.power import choose_power_source

PROMPT = "List the planets of the solar system with one sentence about each:\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--decodes", type=int, default=4, help="decodes per block")
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
    rows = 0
    scratch = Path(tempfile.mkdtemp(prefix="edgebench-timeline-cost-"))
    source = choose_power_source().source

    def block(sampled: bool) -> None:
        nonlocal rows
        timeline = Timeline(scratch, source, interval=args.interval) if sampled else None
        if timeline is not None:
            timeline.open(resumed=False)
            timeline.start()
        for _ in range(args.decodes):
            gen = backend.generate(PROMPT, settings)
            timing = compute_timings(gen)
            if timing.decode_tok_s is None or gen.t_first_token is None:
                continue
            totals[sampled][0] += gen.generated_tokens - gen.forced_prefix_tokens - 1
            totals[sampled][1] += gen.t_end - gen.t_first_token
        if timeline is not None:
            timeline.stop()
            rows += timeline.rows

    for round_ in range(args.rounds):  # alternate, and swap which goes first each round
        order = (False, True) if round_ % 2 == 0 else (True, False)
        for sampled in order:
            block(sampled)
    backend.close()
    device = device_info(args.threads)
    off = totals[False][0] / totals[False][1]
    on = totals[True][0] / totals[True][1]
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {device['cpu_model']} · "
        f"{platform.platform()} · {args.threads} threads · {model.label}"
    )
    print(
        f"rounds {args.rounds} x {args.decodes} decodes of up to {args.tokens} tokens each "
        f"way; sampler interval {args.interval:g} s, {rows} timeline rows written"
    )
    print("| sampler | decode tokens | decode s | decode tok/s |")
    print("|---|---|---|---|")
    for sampled, label in ((False, "off"), (True, "on")):
        tokens, seconds = totals[sampled]
        print(f"| {label} | {tokens} | {seconds:.2f} | {tokens / seconds:.1f} |")
    print(f"ratio on/off: {on / off:.4f} (cost {100 * (1 - on / off):+.2f}%)")


if __name__ == "__main__":
    main()
