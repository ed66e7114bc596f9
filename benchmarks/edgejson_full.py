"""Full built-in EdgeJSON run for each registry model; prints a Markdown table.

Usage: python benchmarks/edgejson_full.py [--threads 2] [--out runs/bench] [MODEL ...]
       python benchmarks/edgejson_full.py --table RUN_DIR ...   (table of finished runs)

Each model runs through `edgebench run` (its own worker process, so peak RSS is the
model's own), one after the other on the same machine, and the table is read back from
each run's summary.json. The figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from edgebench.models.registry import load_registry


def run_model(model: str, threads: int, out: Path) -> Path:
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
    subprocess.run(command, check=True)
    return run_dir


def row(model: str, summary: dict) -> str:
    """The run's first arm (its first model, first constraint mode: `none` unless the
    run was told otherwise)."""
    arm = summary["arms"][0]
    m, p = arm["families"][summary["task_family"]]["overall"], arm["perf"]
    cells = [
        model,
        str(arm["n_examples"]),
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
    parser.add_argument("--table", type=Path, nargs="+", help="only print finished runs")
    args = parser.parse_args()
    if args.table:
        runs = {d.name: d for d in args.table}
    else:
        runs = {m: run_model(m, args.threads, args.out) for m in args.models}
    print()
    for name, run_dir in runs.items():
        device = json.loads((run_dir / "manifest.json").read_text())["device"]
        print(
            f"{name}: {device['cpu_model']}, {device['logical_cores']} cores, "
            f"{device['ram_total_mb']} MB RAM, {device['os']}, threads {device['threads_used']}"
        )
    print()
    print(
        "| model | n | JSONExact | Field F1 | Schema | valid JSON | TTFT p50 s | latency p50 s "
        "| latency p95 s | decode tok/s p50 | prefill tok/s p50 | peak RSS MB | load s "
        "| hit max_tokens | wall s |"
    )
    print("|" + "---|" * 15)
    for name, run_dir in runs.items():
        print(row(name, json.loads((run_dir / "summary.json").read_text())))


if __name__ == "__main__":
    main()
