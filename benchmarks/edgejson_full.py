"""Full built-in EdgeJSON run for each registry model; prints a Markdown table.

Usage: python benchmarks/edgejson_full.py [--threads 2] [--out runs/bench] [MODEL ...]

Each model runs through `edgebench run` (its own worker process, so peak RSS is the
model's own), one after the other on the same machine, and the table is read back from
each run's summary.json. The figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

from edgebench.models.registry import load_registry
from edgebench.runner.manifest import device_info


def run_model(model: str, threads: int, out: Path) -> dict:
    run_dir = out / model
    command = [
        sys.executable,
        "-m",
        "edgebench",
        "run",
        "--model",
        model,
        "--threads",
        str(threads),
        "--out",
        str(run_dir),
    ]
    print("$", " ".join(["edgebench", *command[3:]]), flush=True)
    start = time.perf_counter()
    subprocess.run(command, check=True)
    summary = json.loads((run_dir / "summary.json").read_text())
    summary["_command_wall_s"] = time.perf_counter() - start
    return summary


def row(model: str, s: dict) -> str:
    m, p = s["metrics"], s["perf"]
    cells = [
        model,
        str(s["n_examples"]),
        f"{m['json_exact']:.3f}",
        f"{m['field_f1']:.3f}",
        f"{m['schema_compliance']:.3f}",
        f"{m['valid_json']:.3f}",
        f"{p['ttft_s']['p50']:.3f}",
        f"{p['latency_s']['p50']:.2f}",
        f"{p['latency_s']['p95']:.2f}",
        f"{p['decode_tok_s']['p50']:.1f}",
        f"{p['prefill_tok_s']['p50']:.0f}",
        f"{p['peak_rss_mb']:.0f}",
        f"{p['load_s']:.2f}",
        str(p["hit_token_limit"]),
        f"{p['wall_s']:.0f}",
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=sorted(load_registry()))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs") / f"bench-{int(time.time())}")
    args = parser.parse_args()
    summaries = {m: run_model(m, args.threads, args.out) for m in args.models}
    device = device_info(args.threads)
    print(
        f"\n{device['cpu_model']}, {device['logical_cores']} cores, "
        f"{device['ram_total_mb']} MB RAM, {platform.platform()}, threads {args.threads}\n"
    )
    print(
        "| model | n | JSONExact | Field F1 | Schema | valid JSON | TTFT p50 s | latency p50 s "
        "| latency p95 s | decode tok/s p50 | prefill tok/s p50 | peak RSS MB | load s "
        "| hit max_tokens | wall s |"
    )
    print("|" + "---|" * 15)
    for model, summary in summaries.items():
        print(row(model, summary))


if __name__ == "__main__":
    main()
