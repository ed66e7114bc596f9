"""ONNX decode: the old loop (KV cache as numpy arrays in and out of `session.run`) against
the IO-bound one (backends/onnx_kv.py `BoundKV`), back to back in one process, and where a
decode step's time goes.

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/onnx_decode.py
           [--model smollm2-135m-instruct@onnx-int4] [--threads 2] [--rounds 3]
           [--depths 0,512] [--prompts 3] [--steps 128] [--genai-python PY]

Two measurements, each loop alternating first and second round by round so a drift of
the shared machine hits both:
  tg    `edgebench bench`'s tg128 (backends/speed_test.py `measure_speed`: 128 single-token
        forward passes of random ids after `depth` cached tokens), tokens/s per loop and
        the new/old ratio of the medians;
  steps greedy decoding of --steps tokens after each of the first --prompts built-in
        EdgeJSON prompts (rendered with the model's chat template, as `edgebench run`
        does), every step timed in parts: onnxruntime's run, KV handling (the step's
        inputs and outputs before the run, the cache and the logits after it), argmax,
        detokenizing (the backend decodes all ids so far once per token, for stop strings
        and the answer-ending policies) and the rest (Python around them). The token ids
        of the two loops must be identical; the benchmark fails otherwise.
--genai-python PY also times onnxruntime-genai's own greedy loop on the same folder and
prompt ids (benchmarks/onnx_genai_loop.py run by PY, an interpreter with onnxruntime-genai:
it would break edgebench's venv, so use a throwaway one).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.onnx_kv import KVCache
from edgebench.backends.onnx_runtime import OnnxBackend
from edgebench.backends.speed_test import SpeedPlan, SpeedTest, measure_speed
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.tasks import get_task

PARTS = ("run", "kv", "argmax", "detokenize", "other")


def loops(backend: OnnxBackend) -> dict[str, Callable[[], KVCache]]:
    return {"old": backend._numpy_kv, "new": backend._bound_kv}


def tg_rates(
    backend: OnnxBackend, depths: list[int], rounds: int
) -> dict[tuple[int, str], list[float]]:
    """tok/s of every round, by (depth, loop)."""
    rates: dict[tuple[int, str], list[float]] = {}
    plan = SpeedPlan(tuple(SpeedTest("tg", 128, depth) for depth in depths), 1, 0)
    names = list(loops(backend))
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            backend.kv_cache = loops(backend)[name]
            for result in measure_speed(backend, plan):
                rates.setdefault((result.test.depth, name), []).extend(result.tok_s)
    return rates


def timed_greedy(
    backend: OnnxBackend, prompt_ids: list[int], steps: int
) -> tuple[list[int], dict[str, float]]:
    """Greedy ids after `prompt_ids` (end-of-text ignored) and seconds per part."""
    clock = time.perf_counter
    spent = dict.fromkeys(("prefill", *PARTS), 0.0)
    kv = backend.new_session()
    start = clock()
    logits = kv.forward(prompt_ids)
    spent["prefill"] = clock() - start
    ids: list[int] = []
    for _ in range(steps):
        t0 = clock()
        token = int(np.argmax(logits))
        t1 = clock()
        ids.append(token)
        backend._decode(ids)
        t2 = clock()
        kv.prepare([token])
        t3 = clock()
        kv.run()
        t4 = clock()
        logits = kv.collect()
        t5 = clock()
        spent["argmax"] += t1 - t0
        spent["detokenize"] += t2 - t1
        spent["kv"] += (t3 - t2) + (t5 - t4)
        spent["run"] += t4 - t3
        spent["other"] += t5 - t0  # minus the parts, below
    spent["other"] -= sum(spent[p] for p in PARTS if p != "other")
    return ids, spent


def step_breakdown(
    backend: OnnxBackend, prompts: list[str], steps: int, rounds: int
) -> tuple[dict[str, dict[str, float]], dict[str, float], list[list[int]]]:
    """Seconds per part summed over prompts and rounds, decode tok/s per loop (total
    steps over total step time) and the greedy ids (the same for both loops)."""
    spent = {name: dict.fromkeys(("prefill", *PARTS), 0.0) for name in loops(backend)}
    ids: dict[str, list[list[int]]] = {name: [] for name in loops(backend)}
    names = list(loops(backend))
    for r in range(rounds):
        for i, prompt in enumerate(prompts):
            order = names if (r + i) % 2 == 0 else names[::-1]
            for name in order:
                backend.kv_cache = loops(backend)[name]
                out, parts = timed_greedy(backend, backend.encode(prompt), steps)
                for part, seconds in parts.items():
                    spent[name][part] += seconds
                if r == 0:
                    ids[name].append(out)
    same = sum(a == b for a, b in zip(ids["old"], ids["new"], strict=True))
    if same != len(prompts):
        sys.exit(f"greedy ids differ between the loops on {len(prompts) - same} prompt(s)")
    n = steps * len(prompts) * rounds
    rates = {name: n / sum(spent[name][p] for p in PARTS) for name in names}
    return spent, rates, ids["new"]


def genai_loop(
    python: str, folder: Any, prompt_ids: list[list[int]], args: Any
) -> list[dict[str, Any]]:
    """onnxruntime-genai's own loop (benchmarks/onnx_genai_loop.py under `python`), one
    row per (round, prompt); exits with its error when it cannot run."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as ids_file:
        json.dump(prompt_ids, ids_file)
        ids_file.flush()
        script = Path(__file__).with_name("onnx_genai_loop.py")
        argv = [python, str(script), str(folder), ids_file.name]
        argv += [str(args.steps), str(args.threads), str(args.rounds)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"onnxruntime-genai failed: {done.stderr.strip().splitlines()[-1:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct@onnx-int4")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--depths", default="0,512")
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--steps", type=int, default=128)
    parser.add_argument("--genai-python", help="an interpreter with onnxruntime-genai")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]

    model = model_under_test(args.model)
    task = get_task("edgejson")
    examples, _ = load_examples(task, RunSettings(limit=args.prompts))
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples[: args.prompts]]
    backend = OnnxBackend(str(model.path), n_threads=args.threads)
    backend.load(2048)
    print(
        f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{platform.processor() or platform.machine()}, threads {args.threads}"
    )
    print(f"# model {model.label} ({model.path})")
    # Warm-up: one untimed request per loop.
    for make in loops(backend).values():
        backend.kv_cache = make
        timed_greedy(backend, backend.encode(prompts[0]), 16)

    rates = tg_rates(backend, depths, args.rounds)
    print(f"\n## tg128 (edgebench bench's probe), {args.rounds} rounds, median tok/s")
    print("| test | old loop | new loop | new / old |")
    print("|---|---|---|---|")
    for depth in depths:
        old = statistics.median(rates[(depth, "old")])
        new = statistics.median(rates[(depth, "new")])
        name = SpeedTest("tg", 128, depth).name
        print(f"| {name} | {old:.1f} | {new:.1f} | {new / old:.2f}x |")

    spent, step_rates, new_ids = step_breakdown(backend, prompts, args.steps, args.rounds)
    same = len(new_ids)
    n = args.steps * len(prompts) * args.rounds
    lengths = [len(backend.encode(p)) for p in prompts]
    print(
        f"\n## greedy decode, {len(prompts)} EdgeJSON prompts ({min(lengths)}-{max(lengths)} "
        f"tokens) x {args.steps} steps x {args.rounds} rounds: ms per step"
    )
    print("| part | old loop | new loop |")
    print("|---|---|---|")
    for part in PARTS:
        old, new = (1000 * spent[name][part] / n for name in ("old", "new"))
        print(f"| {part} | {old:.3f} | {new:.3f} |")
    total = {name: 1000 / step_rates[name] for name in step_rates}
    print(f"| **step** | **{total['old']:.2f}** | **{total['new']:.2f}** |")
    print(
        f"| decode tok/s | {step_rates['old']:.1f} | {step_rates['new']:.1f} "
        f"({step_rates['new'] / step_rates['old']:.2f}x) |"
    )
    print(f"\ngreedy ids identical on {same}/{len(prompts)} prompts")
    if args.genai_python:
        prompt_ids = [backend.encode(p) for p in prompts]
        rows = genai_loop(args.genai_python, model.path, prompt_ids, args)
        rate = statistics.median(row["tok_s"] for row in rows)
        # genai stops at end-of-text; the loops above decode past it.
        same = sum(
            row["ids"] == ids[: len(row["ids"])]
            for row, ids in zip(rows[: len(new_ids)], new_ids, strict=True)
        )
        print(
            f"onnxruntime-genai's loop: {rate:.1f} tok/s median over {len(rows)} requests "
            f"({rate / step_rates['new']:.2f}x the new loop's steps); greedy ids equal to "
            f"the new loop's (up to its end-of-text) on {same}/{len(prompts)} prompts"
        )
    backend.close()


if __name__ == "__main__":
    main()
