"""`edgebench bench` with two llama.cpp builds, back to back, alternating, same everything else.

Usage: python benchmarks/build_variants.py --build NAME=SITE_DIR [--build NAME=SITE_DIR ...]
           [--rounds 2] [--threads 2] [--prompt-tokens 512] [--gen-tokens 128]
           [--repetitions 3] [--model smollm2-135m-instruct] [--out DIR]

A build is a directory holding an installed `llama_cpp` package (a site-packages folder);
`NAME=this` is the one this interpreter imports. Each round runs `edgebench bench` once per
build, the order alternating from round to round, with only the llama_cpp package swapped
(PYTHONPATH points at a folder holding a link to that build's package): same interpreter,
same edgebench, numpy, model and thread pinning. It prints every row, the CPU features each
build reports (llama.cpp's system info), and per test the ratio of each build's mean to the
first build's in the same round.

To make a second build beside the installed one (about 4-5 minutes on 2 cores):

    python3 -m venv /tmp/venv-native
    CMAKE_ARGS="$(python3 edgebench/system/build_flags.py)" /tmp/venv-native/bin/pip install \
        --no-cache-dir --no-deps llama-cpp-python==0.3.36
    python benchmarks/build_variants.py --build avx2=this \
        --build native=/tmp/venv-native/lib/python3.11/site-packages

Run it under `flock /tmp/edgebench-cpu.lock` on a shared machine.
"""

from __future__ import annotations

import argparse
import importlib.util
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


def parse_build(text: str) -> tuple[str, Path]:
    name, sep, where = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--build wants NAME=SITE_DIR, not {text!r}")
    if where == "this":
        spec = importlib.util.find_spec("llama_cpp")
        if spec is None or not spec.submodule_search_locations:
            raise argparse.ArgumentTypeError("this interpreter has no llama_cpp")
        return name, Path(next(iter(spec.submodule_search_locations)))
    package = Path(where) / "llama_cpp"
    if not (package / "__init__.py").exists():
        raise argparse.ArgumentTypeError(f"{where} holds no llama_cpp package")
    return name, package


def shadow(package: Path, root: Path) -> Path:
    """A folder whose only entry is a link to `package`: put first on PYTHONPATH."""
    root.mkdir(parents=True, exist_ok=True)
    link = root / "llama_cpp"
    if not link.exists():
        link.symlink_to(package.resolve(), target_is_directory=True)
    return root


def run_bench(path_dir: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "edgebench", "bench", "-m", args.model, "-t", str(args.threads),
        "-p", str(args.prompt_tokens), "-n", str(args.gen_tokens),
        "-r", str(args.repetitions), "-o", str(out),
    ]  # fmt: skip
    path = os.pathsep.join(p for p in (str(path_dir), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"edgebench bench failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(out.read_text())


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["test"]: rate_stats(r["tok_s"]) for r in report["results"]}


def system_info(report: dict[str, Any]) -> str:
    runtime = report.get("device", {}).get("runtime") or {}
    return str(runtime.get("system_info", "?"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=parse_build, action="append", required=True)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--out", type=Path, help="folder for the bench JSON files")
    args = parser.parse_args()
    builds: list[tuple[str, Path]] = args.build
    out = args.out or Path(tempfile.mkdtemp(prefix="build-variants-"))
    dirs = {name: shadow(package, out / f"path-{name}") for name, package in builds}

    started = time.time()
    rounds: list[dict[str, dict[str, dict[str, Any]]]] = []
    for n in range(args.rounds):
        order = builds if n % 2 == 0 else builds[::-1]
        measured: dict[str, dict[str, dict[str, Any]]] = {}
        for name, _ in order:
            report = run_bench(dirs[name], out / f"round{n + 1}-{name}.json", args)
            measured[name] = rows(report)
            if n == 0:
                print(f"{name}: {system_info(report)}", flush=True)
            for test, stats in measured[name].items():
                print(
                    f"round {n + 1} {name:10} {test:6} {stats['tok_s_mean']:8.2f} "
                    f"± {stats['tok_s_std'] or 0.0:6.2f} tok/s",
                    flush=True,
                )
        rounds.append(measured)
    summarize(rounds, [name for name, _ in builds], args, time.time() - started)


def summarize(rounds: list[dict[str, dict[str, dict[str, Any]]]], names: list[str],
              args: argparse.Namespace, wall: float) -> None:  # fmt: skip
    base = names[0]
    print(
        f"\n{len(rounds)} rounds, {args.repetitions} repetitions, {args.threads} threads, "
        f"wall {wall:.0f} s; ratios to {base} in the same round"
    )
    print("| test | " + " | ".join(f"{n} tok/s (mean of rounds)" for n in names) + " | "
          + " | ".join(f"{n} / {base}" for n in names[1:]) + " |")  # fmt: skip
    print("|---" * (1 + 2 * len(names) - 1) + "|")
    for test in rounds[0][base]:
        means = {n: [r[n][test]["tok_s_mean"] for r in rounds] for n in names}
        cells = [f"{statistics.fmean(means[n]):.1f}" for n in names]
        for n in names[1:]:
            ratios = [a / b for a, b in zip(means[n], means[base], strict=True)]
            each = ", ".join(f"{x:.3f}" for x in ratios)
            cells.append(f"{statistics.fmean(ratios):.3f} ({each})")
        print(f"| {test} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
