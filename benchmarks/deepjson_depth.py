"""DeepJSONEval accuracy by depth, per model and constraint mode; prints Markdown tables.

Usage: python benchmarks/deepjson_depth.py [--limit 50] [--constraint none,mask]
                                           [--threads 2] [--out runs/depth] [MODEL ...]
       python benchmarks/deepjson_depth.py --table RUN_DIR ...   (tables of finished runs)

Each model runs through `edgebench run --task deepjson` (every constraint mode in its own
worker, the same examples), one model after the other, and the tables are read back from
each run's summary.json. The built-in set cycles through depths 3..7, so `--limit 50`
takes ten examples of each depth. The figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from edgebench.models.registry import load_registry

DEPTHS = ("3", "4", "5", "6", "7")


def run_model(model: str, args: argparse.Namespace) -> Path:
    run_dir = args.out / model
    command = [
        sys.executable, "-m", "edgebench", "run", "--task", "deepjson", "--model", model,
        "--constraint", args.constraint, "--limit", str(args.limit),
        "--threads", str(args.threads), "--out", str(run_dir),
    ]  # fmt: skip
    print("$", " ".join(["edgebench", *command[3:]]), flush=True)
    subprocess.run(command, check=True)
    return run_dir


def _triple(scores: dict | None) -> str:
    if not scores or not scores.get("n"):
        return "-"
    return f"{scores['syntax']:.2f} / {scores['key_matching']:.2f} / {scores['strict']:.2f}"


def first_model_arms(summary: dict) -> list[tuple[dict, dict]]:
    """(arm, its task family's figures) for every constraint mode of the run's first
    model, in run order."""
    first = summary["models"][0]
    return [
        (arm, arm["families"][summary["task_family"]])
        for arm in summary["arms"]
        if arm["model"] == first
    ]


def depth_rows(name: str, summary: dict) -> list[str]:
    rows = []
    for arm, task in first_model_arms(summary):
        by_depth = task["groups"].get("depth", {})
        by_tier = task["groups"].get("difficulty", {})
        cells = [name, arm["constraint"], str(task["overall"]["n"])]
        cells += [_triple(by_depth.get(depth)) for depth in DEPTHS]
        cells += [_triple(by_tier.get("medium")), _triple(by_tier.get("hard"))]
        cells.append(_triple(task["overall"]))
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def perf_rows(name: str, summary: dict) -> list[str]:
    rows = []
    for arm, task in first_model_arms(summary):
        m, p = task["overall"], arm["perf"]
        cells = [
            name,
            arm["constraint"],
            f"{m['valid_json']:.2f}",
            f"{p['ttft_s']['p50']:.2f}",
            f"{p['latency_s']['p50']:.2f}",
            f"{p['decode_tok_s']['p50']:.1f}",
            f"{p['prefill_tok_s']['p50']:.0f}",
            str(p["hit_token_limit"]),
            str(arm["n_skipped"]),
            f"{p['peak_rss_mb']:.0f}",
            f"{p['wall_s']:.0f}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=sorted(load_registry()))
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--constraint", default="none,mask")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs") / f"depth-{int(time.time())}")
    parser.add_argument("--table", type=Path, nargs="+", help="only print finished runs")
    args = parser.parse_args()
    if args.table:
        runs = {d.name: d for d in args.table}
    else:
        runs = {m: run_model(m, args) for m in args.models}
    summaries = {n: json.loads((d / "summary.json").read_text()) for n, d in runs.items()}
    print()
    for name, run_dir in runs.items():
        device = json.loads((run_dir / "manifest.json").read_text())["device"]
        print(
            f"{name}: {device['cpu_model']}, {device['logical_cores']} cores, "
            f"{device['ram_total_mb']} MB RAM, {device['os']}, threads {device['threads_used']}"
        )
    print("\nSyntax / Key-matching / Strict by depth (Medium = 3-4, Hard = 5-7):\n")
    print("| model | constraint | n | " + " | ".join(f"depth {d}" for d in DEPTHS)
          + " | Medium | Hard | overall |")  # fmt: skip
    print("|" + "---|" * 11)
    for name, summary in summaries.items():
        print("\n".join(depth_rows(name, summary)))
    print("\n| model | constraint | valid JSON | TTFT p50 s | latency p50 s | decode tok/s p50 "
          "| prefill tok/s p50 | hit max_tokens | skipped | peak RSS MB | wall s |")  # fmt: skip
    print("|" + "---|" * 11)
    for name, summary in summaries.items():
        print("\n".join(perf_rows(name, summary)))


if __name__ == "__main__":
    main()
