"""Prefill and decode speed and peak memory versus prompt length and context size.

Usage: python benchmarks/context_scaling.py [--model M] [--threads 2] [--rounds 3]
           [--repetitions 2] [--lengths 128,256,512,1024,2048,4096] [--gen 128]
           [--n-ctx 1024,2048,4096,8192] [--fixed-prompt 512]
           [--plot docs/images/context_scaling.png] [--json FILE]

Two sweeps, each configuration in a fresh worker process (so its peak RSS is its own),
measured with `edgebench bench`'s probe (KV cache cleared before every repetition):
  prompt length N: the context is what `edgebench run` would size (N + gen tokens);
      rows ppN (prefill) and tg{gen} @ dN (decoding after an N-token prompt);
  context size C: the same prompt (--fixed-prompt) in contexts of C tokens.
Every round runs every configuration once (warm-up, then --repetitions), so a drift of
the machine spreads over all of them; the figures pool all rounds. Prints Markdown
tables and writes a PNG plot (matplotlib).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.backends import backend_for
from edgebench.backends.speed_test import SpeedPlan, SpeedResult, SpeedTest, rate_stats
from edgebench.backends.worker import BackendWorker
from edgebench.cli.options import parse_int_list
from edgebench.runner.prepare import model_under_test
from edgebench.system.device import device_info


@dataclass
class Config:
    sweep: str  # "prompt" or "n_ctx"
    prompt: int
    n_ctx: int
    gen: int
    pp: SpeedResult = field(init=False)
    tg: SpeedResult = field(init=False)
    peak_rss_mb: float = 0.0
    peak_anon_mb: float = 0.0

    def __post_init__(self) -> None:
        self.pp = SpeedResult(SpeedTest("pp", self.prompt))
        self.tg = SpeedResult(SpeedTest("tg", self.gen, depth=self.prompt))


def run_config(config: Config, model: Any, threads: int, args: argparse.Namespace) -> None:
    backend, options = backend_for(model.backend, "none")
    worker = BackendWorker(
        backend, {"model_path": str(model.path), "n_threads": threads, **options}
    )
    try:
        worker.load(config.n_ctx)
        plan = SpeedPlan((config.pp.test, config.tg.test), repetitions=args.repetitions, warmup=1)
        pp, tg = worker.speed_test(plan)
        config.pp.extend(pp)
        config.tg.extend(tg)
    finally:
        memory = worker.close()
    config.peak_rss_mb = max(config.peak_rss_mb, memory.peak_rss_mb)
    config.peak_anon_mb = max(config.peak_anon_mb, memory.peak_rss_anon_mb or 0.0)


def row(config: Config) -> dict[str, Any]:
    pp, tg = rate_stats(config.pp.tok_s), rate_stats(config.tg.tok_s)
    others = [v for v in config.pp.cpu_others + config.tg.cpu_others if v is not None]
    return {
        "sweep": config.sweep,
        "prompt_tokens": config.prompt,
        "n_ctx": config.n_ctx,
        "gen_tokens": config.gen,
        "prefill_tok_s": pp["tok_s_mean"],
        "prefill_std": pp["tok_s_std"],
        "decode_tok_s": tg["tok_s_mean"],
        "decode_std": tg["tok_s_std"],
        "repetitions": len(config.pp.seconds),
        "peak_rss_mb": config.peak_rss_mb,
        "peak_anon_mb": config.peak_anon_mb,
        "cpu_others_max": max(others) if others else None,
    }


def markdown(rows: list[dict[str, Any]], first: str) -> str:
    lines = [
        f"| {first} | n_ctx | prefill tok/s (ppN) | decode tok/s (tg @ dN) "
        "| peak RSS MB | anon MB | others CPU max |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        key = r["prompt_tokens"] if first == "prompt tokens" else r["n_ctx"]
        lines.append(
            f"| {key} | {r['n_ctx']} | {_spread(r['prefill_tok_s'], r['prefill_std'])} | "
            f"{_spread(r['decode_tok_s'], r['decode_std'])} | {r['peak_rss_mb']:.0f} | "
            f"{r['peak_anon_mb']:.0f} | {100 * (r['cpu_others_max'] or 0):.0f}% |"
        )
    return "\n".join(lines)


def _spread(mean: float, std: float | None) -> str:
    """`mean ± std`; one timed repetition has no spread to show."""
    return f"{mean:.1f}" if std is None else f"{mean:.1f} ± {std:.1f}"


def _panel(
    ax: Any, rows: list[dict[str, Any]], x_key: str, lines: list[tuple], **labels: Any
) -> None:
    """One subplot: a line (with error bars when a std key is given) per (key, std, label)."""
    x = [r[x_key] for r in rows]
    for key, std_key, label in lines:
        y = [r[key] for r in rows]
        yerr = [r[std_key] or 0 for r in rows] if std_key else None
        ax.errorbar(x, y, yerr=yerr, marker="o", capsize=3, label=label)
    ax.set(xscale="log", ylim=(0, None), **labels)
    ax.set_xticks(x, [str(v) for v in x])
    ax.minorticks_off()  # the log axis' own minor labels would overprint ours
    ax.legend()


def plot(rows: list[dict[str, Any]], title: str, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("the plot needs matplotlib: pip install 'edgebench[report]'") from None
    by_prompt = [r for r in rows if r["sweep"] == "prompt"]
    by_ctx = [r for r in rows if r["sweep"] == "n_ctx"]
    memory = [("peak_rss_mb", None, "peak RSS"), ("peak_anon_mb", None, "anonymous (KV, buffers)")]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    speed = [
        ("prefill_tok_s", "prefill_std", "prefill (ppN)"),
        ("decode_tok_s", "decode_std", "decode after N tokens"),
    ]
    _panel(
        axes[0],
        by_prompt,
        "prompt_tokens",
        speed,
        xlabel="prompt tokens N",
        ylabel="tokens/s",
        title="speed vs prompt length",
    )
    _panel(
        axes[1],
        by_prompt,
        "prompt_tokens",
        memory,
        xlabel="prompt tokens N (n_ctx = N + gen)",
        ylabel="MB",
        title="memory vs prompt length",
    )
    if by_ctx:
        _panel(
            axes[2],
            by_ctx,
            "n_ctx",
            memory,
            ylabel="MB",
            title="memory vs context size",
            xlabel=f"n_ctx (prompt of {by_ctx[0]['prompt_tokens']} tokens)",
        )
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--lengths", default="128,256,512,1024,2048,4096")
    parser.add_argument("--gen", type=int, default=128)
    parser.add_argument("--n-ctx", default="1024,2048,4096,8192")
    parser.add_argument("--fixed-prompt", type=int, default=512)
    parser.add_argument("--plot", type=Path, default=Path("docs/images/context_scaling.png"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    model = model_under_test(args.model)
    configs = [
        Config("prompt", n, n + args.gen, args.gen)
        for n in parse_int_list(args.lengths, "--lengths", 1)
    ] + [
        Config("n_ctx", args.fixed_prompt, c, args.gen)
        for c in parse_int_list(args.n_ctx, "--n-ctx", args.fixed_prompt + args.gen)
    ]
    started = time.strftime("%Y-%m-%d %H:%M")
    t0 = time.perf_counter()
    for round_ in range(args.rounds):
        for config in configs:
            run_config(config, model, args.threads, args)
        print(
            f"round {round_ + 1}/{args.rounds} done ({time.perf_counter() - t0:.0f} s)", flush=True
        )
    rows = [row(c) for c in configs]
    device = device_info(args.threads)
    title = (
        f"{model.label} · {device.cpu_model}, {device.logical_cores} cores, "
        f"{device.ram_total_mb} MB RAM · {device.os} · threads {args.threads} · {started}"
    )
    print(
        f"\n{title}; {args.rounds} rounds x {args.repetitions} repetitions, "
        f"wall {time.perf_counter() - t0:.0f} s\n"
    )
    print(markdown([r for r in rows if r["sweep"] == "prompt"], "prompt tokens"))
    print()
    print(markdown([r for r in rows if r["sweep"] == "n_ctx"], "n_ctx"))
    plot(rows, title, args.plot)
    print(f"\nplot: {args.plot}")
    if args.json:
        args.json.write_text(json.dumps({"title": title, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
