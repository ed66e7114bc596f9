"""Does edgebench's own decode loop slow llama.cpp down? Three ways to decode, one process.

Usage: python benchmarks/harness_overhead.py [--limit 8] [--rounds 5] [--threads 2]
                                             [--max-tokens 128]

The same model, prompts and greedy settings, decoded by
  minimal    a minimal loop written straight against llama.cpp's low-level API
             (tokenize, clear the KV cache, llama_decode the prompt, then greedy
             llama_sampler_sample / llama_decode one token at a time), in this process;
  edgebench  edgebench's llama backend (`LlamaCppBackend.generate`, the code a run's
             worker executes) plus the runner's timing arithmetic, in this process, with
             the run's memory sampler reading /proc meanwhile;
  worker     the same backend in edgebench's worker process, driven over its pipe and
             sampled by the parent, exactly as `edgebench run` does.
The three are interleaved (every prompt, every round, in a rotating order) so that a
drift of the machine hits all of them alike, and only one decodes at a time. The
minimal loop generates exactly as many tokens as edgebench did for each prompt (and the
script checks the texts agree), so all three do the same forward passes.

It prints decode tokens/s (pooled: all decode steps / all decode seconds) and its ratio
to the minimal loop with a 95% bootstrap interval over the paired generations, TTFT and
its paired difference (mean with a 95% interval, and median), and, from llama.cpp's own
counters, the time each loop spends outside llama_decode: the harness's own cost, free
of the machine's noise. For the worker arm it also measures the CPU time edgebench's
parent side used during each request (its main thread and memory sampler): the other
way the harness can slow the model, by taking a core from its threads. Bound on what
edgebench adds to TTFT: the extra time outside llama_decode plus twice the parent's CPU
time while the worker prefills (a preempted thread can hold up the other at the next
barrier).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.backends.worker import BackendWorker
from edgebench.runfolder.records import RunSettings
from edgebench.runner.budget import plan_budget, reference_text
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.samples import compute_timings
from edgebench.system.device import device_info
from edgebench.system.memory import MemorySampler
from edgebench.tasks import get_task

ARMS = ("minimal", "edgebench", "worker")


class MinimalLoop:
    """The least a greedy decoder over llama.cpp's low-level API can do."""

    def __init__(self, model_path: str, n_ctx: int, n_threads: int, n_batch: int = 512) -> None:
        import llama_cpp as L

        self.L = L
        L.llama_backend_init()
        mparams = L.llama_model_default_params()
        mparams.n_gpu_layers = 0
        self.model = L.llama_model_load_from_file(model_path.encode(), mparams)
        self.vocab = L.llama_model_get_vocab(self.model)
        cparams = L.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = cparams.n_ubatch = min(n_batch, n_ctx)
        cparams.n_threads = cparams.n_threads_batch = n_threads
        cparams.no_perf = False
        self.ctx = L.llama_init_from_model(self.model, cparams)
        self.sampler = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        L.llama_sampler_chain_add(self.sampler, L.llama_sampler_init_greedy())
        self.n_batch = cparams.n_batch

    def generate(self, prompt: str, max_tokens: int) -> dict[str, Any]:
        L = self.L
        t_start = time.perf_counter()
        data = prompt.encode("utf-8")
        buf = (L.llama_token * (len(data) + 8))()
        n = L.llama_tokenize(self.vocab, data, len(data), buf, len(buf), True, True)
        tokens = list(buf[:n])
        bos = L.llama_vocab_bos(self.vocab)
        if len(tokens) > 1 and tokens[0] == tokens[1] == bos:
            del tokens[0]  # a template that writes BOS itself, as edgebench does
        L.llama_memory_clear(L.llama_get_memory(self.ctx), True)
        L.llama_perf_context_reset(self.ctx)
        L.llama_sampler_reset(self.sampler)
        array = (L.llama_token * len(tokens))(*tokens)
        for start in range(0, len(tokens), self.n_batch):
            count = min(self.n_batch, len(tokens) - start)
            pointer = ctypes.cast(
                ctypes.addressof(array) + start * ctypes.sizeof(L.llama_token),
                ctypes.POINTER(L.llama_token),
            )
            L.llama_decode(self.ctx, L.llama_batch_get_one(pointer, count))
        out: list[int] = []
        one = (L.llama_token * 1)()
        t_first = None
        while True:
            token = L.llama_sampler_sample(self.sampler, self.ctx, -1)
            if t_first is None:
                t_first = time.perf_counter()
            out.append(token)
            if L.llama_vocab_is_eog(self.vocab, token) or len(out) >= max_tokens:
                break
            one[0] = token
            L.llama_decode(self.ctx, L.llama_batch_get_one(one, 1))
        t_end = time.perf_counter()
        perf = L.llama_perf_context(self.ctx)
        return {
            "prompt_tokens": len(tokens),
            "tokens": out,
            "t_start": t_start,
            "t_first": t_first,
            "t_end": t_end,
            "t_p_eval_ms": perf.t_p_eval_ms,
            "t_eval_ms": perf.t_eval_ms,
            "n_eval": perf.n_eval,
        }

    def text(self, tokens: list[int]) -> str:
        buf = ctypes.create_string_buffer(256)
        pieces = b""
        for token in tokens:
            if self.L.llama_vocab_is_eog(self.vocab, token):
                break
            n = self.L.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            pieces += buf.raw[:n]
        return pieces.decode("utf-8", "replace")

    def close(self) -> None:
        self.L.llama_sampler_free(self.sampler)
        self.L.llama_free(self.ctx)
        self.L.llama_model_free(self.model)


@dataclass
class Sample:
    """One timed generation, reduced to what the comparison needs."""

    ttft_s: float
    decode_steps: int
    decode_s: float
    outside_prefill_s: float  # TTFT minus llama.cpp's prompt-eval time
    outside_decode_s: float  # decode time minus llama.cpp's eval time
    parent_cpu_s: float | None = None  # edgebench's parent-side CPU during a worker request
    sampler_cpu_s: float | None = None  # the part spent while the worker computes


@dataclass
class Arm:
    name: str
    samples: list[Sample] = field(default_factory=list)

    def pooled_rate(self, picks: list[int] | None = None) -> float:
        chosen = self.samples if picks is None else [self.samples[i] for i in picks]
        return sum(s.decode_steps for s in chosen) / sum(s.decode_s for s in chosen)


def from_generation(gen: Generation) -> Sample:
    timings = compute_timings(gen)
    counters = gen.runtime_counters
    assert timings.ttft_s is not None and gen.t_first_token is not None
    decode_s = gen.t_end - gen.t_first_token
    return Sample(
        ttft_s=timings.ttft_s,
        decode_steps=gen.generated_tokens - 1,
        decode_s=decode_s,
        outside_prefill_s=timings.ttft_s - counters["t_p_eval_ms"] / 1000,
        outside_decode_s=decode_s - counters["t_eval_ms"] / 1000,
    )


def from_minimal(result: dict[str, Any]) -> Sample:
    ttft = result["t_first"] - result["t_start"]
    decode_s = result["t_end"] - result["t_first"]
    return Sample(
        ttft_s=ttft,
        decode_steps=len(result["tokens"]) - 1,
        decode_s=decode_s,
        outside_prefill_s=ttft - result["t_p_eval_ms"] / 1000,
        outside_decode_s=decode_s - result["t_eval_ms"] / 1000,
    )


class TimedSampler(MemorySampler):
    """The run's memory sampler, counting the CPU time of its own thread. With the main
    thread's, that is what edgebench's parent spends during a request (this process's
    other threads belong to the in-process arms' llama.cpp and are not counted)."""

    cpu_s = 0.0

    def _loop(self) -> None:
        start = time.thread_time()
        super()._loop()
        self.cpu_s = time.thread_time() - start


def bootstrap_ratio(a: Arm, b: Arm, seed: int = 7, n: int = 4000) -> tuple[float, float]:
    """95% interval of pooled-rate(b) / pooled-rate(a), resampling paired generations."""
    rng = random.Random(seed)
    count = len(a.samples)
    ratios = []
    for _ in range(n):
        picks = [rng.randrange(count) for _ in range(count)]
        ratios.append(b.pooled_rate(picks) / a.pooled_rate(picks))
    ratios.sort()
    return ratios[int(0.025 * n)], ratios[int(0.975 * n) - 1]


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval."""
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    return mean, mean - half, mean + half


def measure(args: argparse.Namespace) -> None:
    task = get_task("edgejson")
    dataset, _ = load_examples(task, RunSettings(limit=args.limit))
    examples = dataset[: args.limit]
    model = model_under_test(None)
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples]
    stop = tuple(dict.fromkeys(model.prompt_format.stop + model.stop))
    backend = LlamaCppBackend(str(model.path), args.threads)
    counts = backend.count_tokens(prompts + [reference_text(ex) for ex in dataset])
    budget = plan_budget(args.max_tokens, dataset, counts[len(prompts) :])
    budgets = [budget.for_example(ex) for ex in examples]
    n_ctx = max(c + b for c, b in zip(counts[: len(prompts)], budgets, strict=True))
    n_ctx = -(-n_ctx // 256) * 256
    build = backend.load(n_ctx).runtime["build"]
    minimal = MinimalLoop(str(model.path), n_ctx, args.threads)
    worker = BackendWorker("llama", {"model_path": str(model.path), "n_threads": args.threads})
    # Its memory sampler would wake every 20 ms in this process during the other arms
    # too; the worker arm starts one around each of its own calls instead.
    worker.process.memory.stop()
    worker.load(n_ctx)
    worker_peak = 0.0
    print(
        f"{len(prompts)} prompts ({min(counts[: len(prompts)])}-{max(counts[: len(prompts)])}"
        f" tokens), max_tokens {max(budgets)}, n_ctx {n_ctx}, threads {args.threads}, "
        f"{args.rounds} rounds",
        flush=True,
    )

    # Untimed first pass (also the warm-up): how many tokens edgebench generates per prompt.
    settings = [DecodeSettings(max_tokens=b, stop=stop) for b in budgets]  # as `edgebench run`
    lengths, texts = [], []
    for prompt, decode in zip(prompts, settings, strict=True):
        gen = backend.generate(prompt, decode)
        worker.generate(prompt, decode)
        lengths.append(gen.generated_tokens)
        texts.append(gen.text)
        minimal.generate(prompt, gen.generated_tokens)

    arms = {name: Arm(name) for name in ARMS}
    mismatches = 0

    def run_arm(name: str, index: int) -> None:
        nonlocal mismatches, worker_peak
        prompt, decode = prompts[index], settings[index]
        if name == "minimal":
            result = minimal.generate(prompt, lengths[index])
            if not minimal.text(result["tokens"]).startswith(texts[index]):
                mismatches += 1
            arms[name].samples.append(from_minimal(result))
            return
        if name == "edgebench":
            sampler = MemorySampler(os.getpid()).start()  # as the run's parent does
            gen = backend.generate(prompt, decode)
            sampler.stop()
        else:
            before = time.thread_time()
            sampler = TimedSampler(worker.process.pid).start()  # as `edgebench run` does
            gen = worker.generate(prompt, decode)
            worker_peak = max(worker_peak, sampler.stop().peak_rss_mb)
            parent_cpu = time.thread_time() - before + sampler.cpu_s
            sampler_cpu = sampler.cpu_s
        if gen.generated_tokens != lengths[index] or gen.text != texts[index]:
            mismatches += 1
        sample = from_generation(gen)
        if name == "worker":
            sample.parent_cpu_s, sample.sampler_cpu_s = parent_cpu, sampler_cpu
        arms[name].samples.append(sample)

    t0 = time.perf_counter()
    for round_ in range(args.rounds):
        for index in range(len(prompts)):
            shift = (round_ + index) % len(ARMS)
            for name in ARMS[shift:] + ARMS[:shift]:
                run_arm(name, index)
        print(f"  round {round_ + 1}/{args.rounds} done", flush=True)
    wall = time.perf_counter() - t0
    worker.close()
    backend.close()
    minimal.close()
    report(arms, args, mismatches, wall, worker_peak, build)


def report(
    arms: dict[str, Arm],
    args: argparse.Namespace,
    mismatches: int,
    wall: float,
    rss: float,
    build: dict[str, Any],
) -> None:
    base = arms["minimal"]
    device = device_info(args.threads)
    print()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')} · {device.cpu_model} · "
        f"{device.logical_cores} cores · {device.ram_total_mb} MB RAM · "
        f"{device.os} · kernel {device.kernel} · threads {args.threads} · "
        f"llama-cpp-python {build['llama_cpp_python']} (ggml {build['ggml_commit']})"
    )
    n = len(base.samples)
    print(
        f"{n} paired generations per arm ({args.limit} prompts x {args.rounds} rounds), "
        f"{sum(s.decode_steps for s in base.samples)} decode steps per arm, wall {wall:.0f} s, "
        f"texts differing from the first pass: {mismatches}, worker peak RSS {rss:.0f} MB"
    )
    print()
    print(
        "| arm | decode tok/s (pooled) | x minimal [95% CI] | TTFT mean ms "
        "| TTFT - minimal ms, mean [95% CI] | median | TTFT outside llama_decode ms "
        "| decode outside llama_decode us/token | parent CPU ms/request "
        "| of which while the worker computes |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for arm in arms.values():
        rate = arm.pooled_rate()
        if arm is base:
            ratio_cell, diff_cell, median_cell = "1", "0", "0"
        else:
            low, high = bootstrap_ratio(base, arm)
            ratio_cell = f"{rate / base.pooled_rate():.3f} [{low:.3f}, {high:.3f}]"
            diffs = [
                1000 * (s.ttft_s - b.ttft_s) for s, b in zip(arm.samples, base.samples, strict=True)
            ]
            mean, lo, hi = mean_interval(diffs)
            diff_cell = f"{mean:+.1f} [{lo:+.1f}, {hi:+.1f}]"
            median_cell = f"{statistics.median(diffs):+.1f}"
        ttft = 1000 * statistics.fmean(s.ttft_s for s in arm.samples)
        outside_prefill = 1000 * statistics.fmean(s.outside_prefill_s for s in arm.samples)
        steps = sum(s.decode_steps for s in arm.samples)
        outside_decode = 1e6 * sum(s.outside_decode_s for s in arm.samples) / steps
        parent = [s.parent_cpu_s for s in arm.samples if s.parent_cpu_s is not None]
        busy = [s.sampler_cpu_s for s in arm.samples if s.sampler_cpu_s is not None]
        parent_cell = f"{1000 * statistics.fmean(parent):.2f}" if parent else "-"
        busy_cell = f"{1000 * statistics.fmean(busy):.2f}" if busy else "-"
        print(
            f"| {arm.name} | {rate:.1f} | {ratio_cell} | {ttft:.1f} | {diff_cell} | "
            f"{median_cell} | {outside_prefill:.2f} | {outside_decode:.1f} | {parent_cell} | "
            f"{busy_cell} |"
        )
    print_ttft_bound(base, arms["worker"])


def print_ttft_bound(base: Arm, worker: Arm) -> None:
    """What edgebench run can add to TTFT, from quantities the VM's noise does not blur:
    the extra wall time outside llama_decode, plus twice the CPU the parent spends while
    the worker computes (the memory sampler's readings, their prefill share by time; the
    main thread only works before the request is sent and after the answer is back)."""
    outside = 1000 * (
        statistics.fmean(s.outside_prefill_s for s in worker.samples)
        - statistics.fmean(s.outside_prefill_s for s in base.samples)
    )
    during_prefill = 1000 * statistics.fmean(
        (s.sampler_cpu_s or 0.0) * s.ttft_s / (s.ttft_s + s.decode_s) for s in worker.samples
    )
    print(
        f"\nTTFT cost of `edgebench run` (worker arm), bound: {outside:+.2f} ms outside "
        f"llama_decode + 2 x {during_prefill:.2f} ms parent CPU during the prefill = "
        f"{outside + 2 * during_prefill:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=8, help="first N built-in prompts")
    parser.add_argument("--rounds", type=int, default=5, help="repetitions of every prompt")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--max-tokens", type=int, default=128, help="token budget (default 128; 0: automatic)"
    )
    args = parser.parse_args()
    args.max_tokens = args.max_tokens or None
    measure(args)


if __name__ == "__main__":
    main()
