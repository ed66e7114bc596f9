"""What does forcing the schema cost per token? Every constraint mode in one process.

Usage: python benchmarks/constrained_overhead.py [--task edgejson|deepjson] [--limit N]
       [--threads 2] [--max-tokens N] [--modes none,mask]

For each mode (none, json, gbnf, outlines, mask; the schema modes also without the
keyword guard, and mask without fast-forwarding) the default model decodes the same
built-in EdgeJSON examples, one mode after the other in this process, and the script
prints: decode tokens/s (p50 over examples and pooled: all decode tokens / all decode
seconds), its ratio to `none` from this same process, forward passes per second,
latency, schema compliance, token-limit hits, and grammar compile times (first compile of
each distinct schema, then the cached one). A second table gives the time per call of
each decode-loop phase (`backends/step_clock.py`: mask, apply, guard, advance, forced,
sample, decode), p50/p99 over every call of the mode, and the rest of the decode time
per token that no phase covers (Python between the phases), with the clock's own cost
per call measured first. Results go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from typing import Any

import numpy as np

from edgebench.backends.base import DecodeSettings, now
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.backends.llama_outlines import OutlinesLlamaBackend
from edgebench.backends.step_clock import PHASES, StepClock, clock
from edgebench.constraints import ConstraintRequest, request_for
from edgebench.metrics import get_family
from edgebench.metrics.score import score_output
from edgebench.runfolder.records import CompileRecord, RunSettings
from edgebench.runner.arm import compile_record
from edgebench.runner.budget import plan_budget, reference_text, size_context
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.samples import compute_timings
from edgebench.system.device import device_info
from edgebench.tasks import get_task

# (row label, constraint mode, fast-forward, keyword guard)
ROWS = (
    ("none", "none", True, False),
    ("json", "json", True, False),
    ("gbnf", "gbnf", True, True),
    ("gbnf, no guard", "gbnf", True, False),
    ("outlines", "outlines", True, True),
    ("outlines, no guard", "outlines", True, False),
    ("mask", "mask", True, True),
    ("mask, no guard", "mask", True, False),
    ("mask, no fast-forward", "mask", False, True),
)


def make_backend(path: str, mode: str, threads: int, fast_forward: bool, guard: bool) -> Any:
    if mode == "outlines":
        return OutlinesLlamaBackend(path, threads, guard=guard)
    return LlamaCppBackend(
        path, threads, constraint_mode=mode, fast_forward=fast_forward, guard=guard
    )


def compile_twice(backend: Any, requests: list[ConstraintRequest | None]) -> list[CompileRecord]:
    """Each distinct schema compiled once (timed), then again (the cached path), as the
    first session of a run's arm records it."""
    records: dict[str, CompileRecord] = {}
    for request in requests:
        if request is not None and request.key not in records:
            first = backend.compile_constraint(request)
            again = backend.compile_constraint(request)
            records[request.key] = compile_record(first, again.seconds)
    return list(records.values())


def clock_cost_ns(calls: int = 200_000) -> float:
    """What timing one phase costs: a `clock()` and a `StepClock.add`, per call."""
    steps = StepClock()
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        steps.add("x", clock())
    return (time.perf_counter_ns() - t0) / calls


def phase_cells(step_ns: dict[str, list[int]]) -> dict[str, str]:
    """p50/p99 µs per call of each phase over every call of a mode."""
    cells = {}
    for phase, values in step_ns.items():
        p50, p99 = (v / 1e3 for v in np.percentile(values, [50, 99]))
        cells[phase] = f"{p50:.0f}/{p99:.0f}" if p50 >= 10 else f"{p50:.1f}/{p99:.0f}"
    return cells


def measure(args: argparse.Namespace) -> None:
    task = get_task(args.task)
    family = get_family(task.metric_family)
    settings = RunSettings(limit=args.limit, threads=args.threads, max_tokens=args.max_tokens)
    dataset, _ = load_examples(task, settings)
    examples = dataset[: args.limit] if args.limit else dataset
    model = model_under_test(None)
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples]
    counter = LlamaCppBackend(str(model.path), args.threads)
    counts = counter.count_tokens(prompts + [reference_text(ex) for ex in dataset])
    counter.close()
    budget = plan_budget(args.max_tokens, dataset, counts[len(prompts) :])
    budgets = [budget.for_example(ex) for ex in examples]
    n_ctx = size_context(examples, counts[: len(prompts)], budgets, None, 8192)
    print(f"{len(examples)} examples, max_tokens up to {max(budgets)}, n_ctx {n_ctx}", flush=True)
    overhead_ns = clock_cost_ns()
    print(f"the step clock costs {overhead_ns:.0f} ns per timed call", flush=True)
    modes = set(args.modes.split(",")) if args.modes else None

    results = []
    for label, mode, fast_forward, guard in ROWS:
        if modes is not None and label not in modes:
            continue
        backend = make_backend(str(model.path), mode, args.threads, fast_forward, guard)
        backend.load(n_ctx)
        requests = [request_for(mode, ex.schema, ex.schema_id) for ex in examples]
        records = compile_twice(backend, requests)
        first = [r.seconds for r in records]
        cached = [r.cached_seconds for r in records if r.cached_seconds is not None]
        backend.generate(prompts[0], DecodeSettings(max_tokens=8, constraint=requests[0]))
        rates, latencies, decode_tokens, decode_seconds, passes = [], [], 0, 0.0, 0
        compliant = cut = 0
        step_ns: dict[str, list[int]] = {}
        timed_calls = 0
        stop = model.prompt_format.stop if mode == "none" else ()
        t0 = now()
        for example, prompt, request, max_tokens in zip(
            examples, prompts, requests, budgets, strict=True
        ):
            gen = backend.generate(
                prompt, DecodeSettings(max_tokens=max_tokens, stop=stop, constraint=request)
            )
            scored = score_output([family], gen.text, example.expected, example.schema)
            scores = scored.scores[family.name]
            compliant += scores.get("schema_compliance", scores.get("syntax", 0))
            cut += gen.finish_reason == "length"
            timings = compute_timings(gen)
            latencies.append(timings.latency_s)
            if timings.decode_tok_s and gen.t_first_token is not None:
                rates.append(timings.decode_tok_s)
                decode_tokens += gen.generated_tokens - gen.forced_prefix_tokens - 1
                decode_seconds += gen.t_end - gen.t_first_token
                passes += gen.forward_passes or 0
                for phase, values in gen.step_ns.items():
                    step_ns.setdefault(phase, []).extend(values)
                    timed_calls += len(values)
        backend.close()
        phase_s = sum(sum(v) for v in step_ns.values()) / 1e9
        results.append(
            {
                "label": label,
                "p50": statistics.median(rates),
                "pooled": decode_tokens / decode_seconds,
                "passes_s": passes / decode_seconds,
                "latency": statistics.median(latencies),
                "schema": compliant / len(examples),
                "cut": cut,
                "wall": now() - t0,
                "compile_first_ms": 1000 * statistics.median(first) if first else None,
                "compile_max_ms": 1000 * max(first) if first else None,
                "compile_cached_ms": 1000 * statistics.median(cached) if cached else None,
                "phases": phase_cells(step_ns),
                # decode time no phase covers, per decode token (the first mask and
                # choice come before the first token's timestamp: a slight undercount)
                "rest_us": max(decode_seconds - phase_s, 0.0) * 1e6 / decode_tokens,
                "clock_us": timed_calls * overhead_ns / 1e3 / decode_tokens,
            }
        )
        print(f"  {label}: {results[-1]['pooled']:.1f} tok/s pooled", flush=True)
    print_table(results, args)


def print_table(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    base = results[0]
    device = device_info(args.threads)
    print()
    print(
        f"{time.strftime('%Y-%m-%d')} · {device.cpu_model} · {device.logical_cores} cores"
        f" · {device.ram_total_mb} MB RAM · {platform.platform()} · threads {args.threads}"
    )
    print()
    print(
        "| mode | decode tok/s p50 | x none | pooled tok/s | x none | forward passes/s "
        "| latency p50 s | schema | cut | wall s | compile ms p50 (max) | cached ms p50 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")

    def ms(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    for r in results:
        compile_cell = (
            "-"
            if r["compile_first_ms"] is None
            else f"{r['compile_first_ms']:.2f} ({r['compile_max_ms']:.1f})"
        )
        print(
            f"| {r['label']} | {r['p50']:.1f} | {r['p50'] / base['p50']:.2f} | "
            f"{r['pooled']:.1f} | {r['pooled'] / base['pooled']:.2f} | {r['passes_s']:.1f} | "
            f"{r['latency']:.2f} | {r['schema']:.2f} | {r['cut']} | {r['wall']:.0f} | "
            f"{compile_cell} | "
            f"{ms(r['compile_cached_ms'], 3)} |"
        )
    phases = [p for p in PHASES if any(p in r["phases"] for r in results)]
    print()
    print(f"| mode | {' | '.join(phases)} | rest µs/token | clock µs/token |")
    print("|---|" + "---|" * (len(phases) + 2))
    for r in results:
        cells = " | ".join(r["phases"].get(p, "-") for p in phases)
        print(f"| {r['label']} | {cells} | {r['rest_us']:.0f} | {r['clock_us']:.2f} |")
    print("(µs per call p50/p99 over every call of the mode)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N examples (default all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--task", default="edgejson", help="edgejson or deepjson (built-in)")
    parser.add_argument("--modes", default=None, help="row labels to run, comma-separated")
    measure(parser.parse_args())


if __name__ == "__main__":
    main()
