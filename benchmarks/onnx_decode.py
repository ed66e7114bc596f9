"""ONNX decode: today's int4 model and loop against the new ones, back to back in one
process, and where a decode step's time goes.

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/onnx_decode.py
           [--model smollm2-135m-instruct@onnx-int4] [--old-model FOLDER] [--threads 2]
           [--rounds 3] [--depths 0,512] [--prompts 3] [--steps 128] [--genai-python PY]

Arms: every graph given (--model, the new conversion; --old-model, a folder converted the
old way, with `models convert ... --graph optimum`) decoded by every loop it can run
(backends/onnx_kv.py): `numpy`, the KV cache as numpy arrays in and out of `session.run`
(the loop before issue 23), `bound` (IO binding, the default on optimum's graph) and, on
a gqa graph, `shared` (one buffer read and written in place, its default). Two
measurements, the arms' order rotating round by round so a drift of the shared machine
hits all of them:
  tg    `edgebench bench`'s tg128 (backends/speed_test.py `measure_speed`: 128 single-token
        forward passes of random ids after `depth` cached tokens), median tokens/s per arm
        and each arm's ratio to the first (today's graph and loop);
  steps greedy decoding of --steps tokens after each of the first --prompts built-in
        EdgeJSON prompts (rendered with the model's chat template, as `edgebench run`
        does), every step timed in parts: onnxruntime's run, KV handling (the step's
        inputs and outputs before the run, the cache and the logits after it), argmax
        (the sampling), detokenizing (the backend decodes all ids so far once per token,
        for stop strings and the answer-ending policies) and the rest (Python around
        them). On each graph every loop's token ids must equal the numpy loop's (the
        benchmark fails otherwise); between the graphs it counts the prompts whose ids
        agree and the first step where they part.
--genai-python PY also times onnxruntime-genai's own greedy loop on each graph with the
same prompt ids (benchmarks/onnx_genai_loop.py run by PY, an interpreter with
onnxruntime-genai: it would break edgebench's venv, so use a throwaway one).
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
from dataclasses import dataclass
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


@dataclass
class Arm:
    """One graph decoded by one loop."""

    name: str
    graph: str  # "old" or "new"
    backend: OnnxBackend
    make: Callable[[], KVCache]

    def select(self) -> OnnxBackend:
        self.backend.kv_cache = self.make
        return self.backend


def arms_for(graphs: dict[str, OnnxBackend]) -> list[Arm]:
    """Every loop a graph can run, today's (the old graph's numpy loop) first: numpy
    (NumpyKV), bound (BoundKV) and, on a gqa graph, shared (SharedKV, its default)."""
    arms = []
    for graph, backend in graphs.items():
        loops = {"numpy": backend._numpy_kv, "bound": backend._bound_kv}
        if backend.model.graph_kind == "gqa":
            loops["shared"] = backend._shared_kv
        for loop, make in loops.items():
            arms.append(Arm(f"{graph} graph, {loop} loop", graph, backend, make))
    return arms


def rotated(arms: list[Arm], r: int) -> list[Arm]:
    return arms[r % len(arms) :] + arms[: r % len(arms)]


def tg_rates(arms: list[Arm], depths: list[int], rounds: int) -> dict[tuple[int, str], list[float]]:
    """tok/s of every round, by (depth, arm)."""
    rates: dict[tuple[int, str], list[float]] = {}
    plan = SpeedPlan(tuple(SpeedTest("tg", 128, depth) for depth in depths), 1, 0)
    for r in range(rounds):
        for arm in rotated(arms, r):
            for result in measure_speed(arm.select(), plan):
                rates.setdefault((result.test.depth, arm.name), []).extend(result.tok_s)
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
    arms: list[Arm], prompts: list[str], steps: int, rounds: int
) -> tuple[dict[str, dict[str, float]], dict[str, float], dict[str, list[list[int]]]]:
    """Seconds per part summed over prompts and rounds, decode tok/s (total steps over
    total step time) and the greedy ids of the first round, by arm."""
    spent = {arm.name: dict.fromkeys(("prefill", *PARTS), 0.0) for arm in arms}
    ids: dict[str, list[list[int]]] = {arm.name: [] for arm in arms}
    for r in range(rounds):
        for i, prompt in enumerate(prompts):
            for arm in rotated(arms, r + i):
                backend = arm.select()
                out, parts = timed_greedy(backend, backend.encode(prompt), steps)
                for part, seconds in parts.items():
                    spent[arm.name][part] += seconds
                if r == 0:
                    ids[arm.name].append(out)
    n = steps * len(prompts) * rounds
    rates = {name: n / sum(parts[p] for p in PARTS) for name, parts in spent.items()}
    return spent, rates, ids


def loop_parity(arms: list[Arm], ids: dict[str, list[list[int]]]) -> None:
    """Exit unless both loops gave the same ids on every graph."""
    for graph in dict.fromkeys(arm.graph for arm in arms):
        first, *others = (a for a in arms if a.graph == graph)
        for other in others:
            differ = sum(a != b for a, b in zip(ids[first.name], ids[other.name], strict=True))
            if differ:
                sys.exit(
                    f"{other.name}: greedy ids differ from the numpy loop's on {differ} prompt(s)"
                )


def agreement(a: list[list[int]], b: list[list[int]]) -> str:
    """How two graphs' greedy ids compare: prompts identical, and where the others part."""
    same = sum(x == y for x, y in zip(a, b, strict=True))
    parts = [
        next(i for i, (p, q) in enumerate(zip(x, y, strict=True)) if p != q)
        for x, y in zip(a, b, strict=True)
        if x != y
    ]
    where = f"; the others part at step {', '.join(map(str, parts))}" if parts else ""
    return f"identical on {same}/{len(a)} prompts{where}"


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
    parser.add_argument("--old-model", help="a folder converted the old way (--graph optimum)")
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
    folders = {"old": args.old_model, "new": str(model.path)} if args.old_model else {}
    folders = folders or {"new": str(model.path)}
    graphs = {}
    print(
        f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{platform.processor() or platform.machine()}, threads {args.threads}"
    )
    for graph, folder in folders.items():
        backend = OnnxBackend(folder, n_threads=args.threads)
        backend.load(2048)
        graphs[graph] = backend
        export = backend.model.provenance.get("export") or {}
        quant = backend.model.provenance.get("quantization") or {}
        print(
            f"# {graph} graph: {folder} ({export.get('graph', 'optimum')}, "
            f"{backend.model.size_bytes / 1e6:.0f} MB, quantization {json.dumps(quant)})"
        )
    arms = arms_for(graphs)
    # Warm-up: one untimed request per arm.
    for arm in arms:
        backend = arm.select()
        timed_greedy(backend, backend.encode(prompts[0]), 16)

    rates = tg_rates(arms, depths, args.rounds)
    base = arms[0].name
    print(f"\n## tg128 (edgebench bench's probe), {args.rounds} rounds, median tok/s")
    print(f"| test | {' | '.join(a.name for a in arms)} |")
    print("|---|" + "---|" * len(arms))
    for depth in depths:
        med = {a.name: statistics.median(rates[(depth, a.name)]) for a in arms}
        cells = [f"{med[a.name]:.1f} ({med[a.name] / med[base]:.2f}x)" for a in arms]
        print(f"| {SpeedTest('tg', 128, depth).name} | {' | '.join(cells)} |")

    spent, step_rates, ids = step_breakdown(arms, prompts, args.steps, args.rounds)
    loop_parity(arms, ids)
    n = args.steps * len(prompts) * args.rounds
    lengths = [len(arms[0].backend.encode(p)) for p in prompts]
    print(
        f"\n## greedy decode, {len(prompts)} EdgeJSON prompts ({min(lengths)}-{max(lengths)} "
        f"tokens) x {args.steps} steps x {args.rounds} rounds: ms per step"
    )
    print(f"| part | {' | '.join(a.name for a in arms)} |")
    print("|---|" + "---|" * len(arms))
    for part in PARTS:
        print(f"| {part} | {' | '.join(f'{1000 * spent[a.name][part] / n:.3f}' for a in arms)} |")
    steps_ms = " | ".join(f"**{1000 / step_rates[a.name]:.2f}**" for a in arms)
    print(f"| **step** | {steps_ms} |")
    cells = [
        f"{step_rates[a.name]:.1f} ({step_rates[a.name] / step_rates[base]:.2f}x)" for a in arms
    ]
    print(f"| decode tok/s | {' | '.join(cells)} |")
    print("\ngreedy ids: every loop identical to the numpy loop on each graph's prompts")
    if len(graphs) == 2:
        print(f"old graph vs new graph: {agreement(ids[arms[0].name], ids[arms[-1].name])}")
    if args.genai_python:
        prompt_ids = [arms[0].backend.encode(p) for p in prompts]
        defaults = {g: b.default_kv().__name__ for g, b in graphs.items()}
        for arm in (a for a in arms if a.make.__name__ == defaults[a.graph]):
            rows = genai_loop(args.genai_python, arm.backend.folder, prompt_ids, args)
            rate = statistics.median(row["tok_s"] for row in rows)
            mine = ids[arm.name]
            # genai stops at end-of-text; the loops above decode past it.
            same = sum(
                row["ids"] == out[: len(row["ids"])]
                for row, out in zip(rows[: len(mine)], mine, strict=True)
            )
            print(
                f"onnxruntime-genai's loop on the {arm.graph} graph: {rate:.1f} tok/s median "
                f"over {len(rows)} requests ({rate / step_rates[arm.name]:.2f}x edgebench's "
                f"{arm.name}); greedy ids equal to its (up to genai's end-of-text) "
                f"on {same}/{len(prompts)} prompts"
            )
    for backend in graphs.values():
        backend.close()


if __name__ == "__main__":
    main()
