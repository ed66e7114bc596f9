"""`edgebench bench` next to llama-bench, on the same machine, minutes apart, several times.

Usage: python benchmarks/bench_vs_llama_bench.py --llama-bench PATH [--rounds 4]
           [--threads 2] [--prompt-tokens 512] [--gen-tokens 128] [--repetitions 5]
           [--model smollm2-135m-instruct] [--out DIR]

Each round runs llama-bench and `edgebench bench` once each with the same model, thread
count, ppN/tgN tests and repetitions, the order alternating from round to round, and
llama-bench with the same OpenMP pinning edgebench applies (so the two differ only in
the harness). It prints every row of both (mean ± std, std/mean), then per test: the
ratio of edgebench's mean to llama-bench's in the same round (does edgebench measure
the same speed?) and how often each tool's spread stayed under 5% of the mean (is a
wide spread the harness's or the machine's?).

llama-bench comes with llama.cpp. To get one built like edgebench's llama.cpp, build
it from the llama-cpp-python sdist edgebench installed (the same llama.cpp commit):

    pip download --no-deps --no-binary :all: llama-cpp-python==$(python -c \
        "import llama_cpp; print(llama_cpp.__version__)") -d /tmp/lcp
    tar xzf /tmp/lcp/llama_cpp_python-*.tar.gz -C /tmp/lcp
    cmake -S /tmp/lcp/llama_cpp_python-*/vendor/llama.cpp -B /tmp/lcp/build \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
        -DGGML_BMI2=ON -DLLAMA_CURL=OFF
    cmake --build /tmp/lcp/build --target llama-bench -j
    # then --llama-bench /tmp/lcp/build/bin/llama-bench
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from edgebench.backends.speed_test import rate_stats
from edgebench.bench.execute import PIN_ENV
from edgebench.runner.prepare import model_under_test

TOOLS = ("llama-bench", "edgebench")
CLEAN_CV = 0.05


def run_llama_bench(binary: str, model: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    command = [
        binary, "-m", str(model), "-t", str(args.threads), "-p", str(args.prompt_tokens),
        "-n", str(args.gen_tokens), "-r", str(args.repetitions), "-o", "json",
    ]  # fmt: skip
    env = {**os.environ, **PIN_ENV}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    rows = []
    for entry in json.loads(done.stdout):
        kind, count = ("pp", entry["n_prompt"]) if entry["n_gen"] == 0 else ("tg", entry["n_gen"])
        rows.append(row(f"{kind}{count}", entry["samples_ts"]))
    return rows


def run_edgebench(model: str, out: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    command = [
        sys.executable, "-m", "edgebench", "bench", "-m", model, "-t", str(args.threads),
        "-p", str(args.prompt_tokens), "-n", str(args.gen_tokens),
        "-r", str(args.repetitions), "-o", str(out),
    ]  # fmt: skip
    subprocess.run(command, capture_output=True, text=True, check=True)
    report = json.loads(out.read_text())
    return [row(r["test"], r["tok_s"]) for r in report["results"]]


def row(test: str, rates: list[float]) -> dict[str, Any]:
    """One row as `edgebench bench` computes it (mean ± sample std, std / mean)."""
    stats = rate_stats(rates)
    return {
        "test": test,
        "mean": stats["tok_s_mean"],
        "std": stats["tok_s_std"] or 0.0,
        "cv": stats["tok_s_cv"] or 0.0,
        "rates": rates,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-bench", required=True, help="path of the llama-bench binary")
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--out", type=Path, help="folder for edgebench's JSON files")
    args = parser.parse_args()

    model = model_under_test(args.model)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-vs-llama-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    rounds: list[dict[str, list[dict[str, Any]]]] = []
    for n in range(args.rounds):
        order = TOOLS if n % 2 == 0 else TOOLS[::-1]
        measured: dict[str, list[dict[str, Any]]] = {}
        for tool in order:
            if tool == "llama-bench":
                measured[tool] = run_llama_bench(args.llama_bench, model.path, args)
            else:
                measured[tool] = run_edgebench(args.model, out / f"round{n + 1}.json", args)
        rounds.append(measured)
        for tool in order:
            for r in measured[tool]:
                rates = ", ".join(f"{x:.0f}" for x in r["rates"])
                print(
                    f"round {n + 1} {tool:11} {r['test']:6} {r['mean']:8.2f} ± {r['std']:6.2f}"
                    f"  {100 * r['cv']:5.1f}%  [{rates}]",
                    flush=True,
                )
    summarize(rounds, args, time.time() - started)


def summarize(rounds: list[dict[str, list[dict[str, Any]]]], args: argparse.Namespace,
              wall: float) -> None:  # fmt: skip
    print(
        f"\n{len(rounds)} rounds, {args.repetitions} repetitions, {args.threads} threads, "
        f"wall {wall:.0f} s"
    )
    print("| test | edgebench / llama-bench (mean per round) | rows < 5%: llama-bench "
          "| rows < 5%: edgebench | median ±%: llama-bench | median ±%: edgebench |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    tests = [r["test"] for r in rounds[0]["edgebench"]]
    for test in tests:
        pick = {
            tool: [next(r for r in measured[tool] if r["test"] == test) for measured in rounds]
            for tool in TOOLS
        }
        pairs = zip(pick["edgebench"], pick["llama-bench"], strict=True)
        ratios = [e["mean"] / b["mean"] for e, b in pairs]
        clean = {t: sum(r["cv"] < CLEAN_CV for r in pick[t]) for t in TOOLS}
        median_cv = {t: statistics.median(r["cv"] for r in pick[t]) for t in TOOLS}
        print(
            f"| {test} | {', '.join(f'{x:.3f}' for x in ratios)} "
            f"(mean {statistics.fmean(ratios):.3f}) "
            f"| {clean['llama-bench']}/{len(rounds)} | {clean['edgebench']}/{len(rounds)} "
            f"| {100 * median_cv['llama-bench']:.1f}% | {100 * median_cv['edgebench']:.1f}% |"
        )


if __name__ == "__main__":
    main()
