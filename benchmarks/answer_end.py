"""What do the answer-ending policies save, what do they cost, and do they change scores?

Usage: python benchmarks/answer_end.py [--limit N] [--threads 2] [--modes none,mask]
       python benchmarks/answer_end.py --cost-only

1. Cost and false positives (no weights loaded): every expected answer of the built-in
   EdgeJSON set, tokenized with the default model's vocabulary, goes token by token
   through `AnswerWatch` (the JSON scanner and the loop rule, as the decode loops call
   it). Printed: microseconds per token (best of 5 passes) and the answers the loop rule
   calls loops (should be none).
2. Wall time, in one process: for each constraint mode one model, and every example
   decoded twice in a row, raw (no policy: the model's own end or the budget) and with
   the policies (stop at the complete JSON in free modes, loop detection; and for mask,
   closing at the budget). Interleaving per example keeps both sides on the same machine
   state. Printed per row: wall seconds, output tokens, tokens after the answer, finish
   reasons, scores; and how many examples score differently from the raw answer on
   JSONExact, Field F1 and schema compliance (stop at the JSON must change none).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import platform
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from edgebench.backends.answer_end import AnswerWatch, EndPolicy, LoopRule
from edgebench.backends.base import DecodeSettings, Generation, now
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.constraints import FREE_MODES, request_for
from edgebench.metrics import get_family
from edgebench.metrics.score import ScoredOutput, score_output
from edgebench.runfolder.records import RunSettings
from edgebench.runner.budget import plan_budget, reference_text, size_context
from edgebench.runner.prefixes import grouped_by_prefix, shared_prefixes
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.samples import compute_timings
from edgebench.system.device import device_info
from edgebench.tasks import get_task

COMPARED = ("json_exact", "field_f1", "schema_compliance")


def policy_cost(examples: list, model_path: str) -> None:
    backend = LlamaCppBackend(model_path, 1)
    backend.load_vocab()
    buf = ctypes.create_string_buffer(64)
    answers = []
    for example in examples:
        text = json.dumps(example.expected, ensure_ascii=False, indent=2)
        ids = backend._tokenize(text)[1:]  # without BOS
        answers.append([(t, backend._piece(t, buf)) for t in ids])
    policy = EndPolicy(stop_at_json=False, loop=LoopRule())
    best = float("inf")
    loops: list[str] = []
    tokens = sum(len(a) for a in answers)
    for _ in range(5):
        loops = []
        start = time.perf_counter()
        for example, answer in zip(examples, answers, strict=True):
            watch = AnswerWatch(policy)
            for token, piece in answer:
                if watch.push(token, piece) is not None:
                    loops.append(example.id)
                    break
        best = min(best, time.perf_counter() - start)
    print(f"policy cost: {len(answers)} expected answers (pretty-printed), {tokens} tokens")
    print(f"  scanner + loop rule: {1e6 * best / tokens:.2f} µs per token (best of 5)")
    print(f"  answers the loop rule calls loops: {len(loops)} {loops[:5]}")


@dataclass
class Row:
    label: str
    wall: float = 0.0
    output_tokens: int = 0
    after_answer: int = 0
    finish: Counter = field(default_factory=Counter)
    scores: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COMPARED, 0.0))
    valid: int = 0
    closed: int = 0
    per_example: list[dict[str, float]] = field(default_factory=list)
    finishes: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    ttft: list[float] = field(default_factory=list)

    def add(self, gen: Generation, scored: ScoredOutput) -> None:
        scores = {k: float(scored.scores["edgejson"][k]) for k in COMPARED}
        for key, value in scores.items():
            self.scores[key] += value
        self.per_example.append(scores)
        self.valid += bool(scored.parse.ok)
        self.output_tokens += gen.output_tokens
        if gen.answer_tokens is not None:
            self.after_answer += gen.output_tokens - gen.answer_tokens
        self.finish[gen.finish_reason] += 1
        self.finishes.append(gen.finish_reason)
        self.closed += gen.closed
        self.texts.append(gen.text)


def measure(args: argparse.Namespace) -> None:
    task = get_task("edgejson")
    family = get_family(task.metric_family)
    dataset, _ = load_examples(task, RunSettings())
    examples = dataset[: args.limit] if args.limit else dataset
    model = model_under_test(None)
    policy_cost(examples, str(model.path))
    if args.cost_only:
        return
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples]
    counter = LlamaCppBackend(str(model.path), args.threads)
    counts = counter.count_tokens(prompts + [reference_text(ex) for ex in dataset])
    counter.close()
    budget = plan_budget(None, dataset, counts[len(prompts) :])
    budgets = [budget.for_example(ex) for ex in examples]
    close_room = EndPolicy().close_tokens
    n_ctx = size_context(
        examples, counts[: len(prompts)], [b + close_room for b in budgets], None, 8192
    )
    print(f"{len(examples)} examples, max_tokens up to {max(budgets)}, n_ctx {n_ctx}", flush=True)
    # The examples of one schema in a row (first-seen order), as --prefix-cache runs
    # them; the other variants clear their KV cache per request, so order is moot there.
    prefixes = shared_prefixes(model.prompt_format, task, examples, prompts)
    order = grouped_by_prefix(list(range(len(examples))), prefixes, counts[: len(prompts)])
    rows: list[Row] = []
    for mode in args.modes.split(","):
        free = mode in FREE_MODES
        policy = EndPolicy(free, LoopRule(), close=not free)
        # (label, policy, prefix cache): each variant has its own model and KV cache.
        variants = [("raw", EndPolicy(), False)]
        if not free:
            variants.append(("loop", EndPolicy(False, LoopRule()), False))
        name = "stop+loop" if free else "loop+close"
        variants += [(name, policy, False), (f"{name}+prefix cache", policy, True)]
        backends = []
        for _ in variants:
            backend = LlamaCppBackend(str(model.path), args.threads, constraint_mode=mode)
            backend.load(n_ctx)
            backends.append(backend)
        stop = model.prompt_format.stop if mode == "none" else ()
        mode_rows = [Row(f"{mode}, {label}") for label, _, _ in variants]
        for index in order:
            example, prompt, max_tokens = examples[index], prompts[index], budgets[index]
            request = request_for(mode, example.schema, example.schema_id)
            for (_, end, cached), row, backend in zip(variants, mode_rows, backends, strict=True):
                if request is not None:
                    backend.compile_constraint(request)
                settings = DecodeSettings(
                    max_tokens, stop, request, end=end, prefix=prefixes[index] if cached else None
                )
                t0 = now()
                gen = backend.generate(prompt, settings)
                row.wall += now() - t0
                row.add(gen, score_output([family], gen.text, example.expected, example.schema))
                row.ttft.append(compute_timings(gen).ttft_s or 0.0)
        for backend in backends:
            backend.close()
        for row in mode_rows:
            print(f"  {row.label}: {row.wall:.1f} s", flush=True)
        rows.extend(mode_rows)
    print_table(rows, len(examples), args)


def print_table(rows: list[Row], n: int, args: argparse.Namespace) -> None:
    device = device_info(args.threads)
    print(
        f"\n{platform.node()} · {device.cpu_model} · {args.threads} threads · "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {n} examples"
    )
    print(
        "| row | wall s | ×raw | TTFT p50 s | output tokens | tokens after answer "
        "| valid JSON | schema | JSONExact | Field F1 | closed | changed vs raw "
        "| loops that raw ended | texts unlike the row above | finish reasons |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    raw: Row | None = None
    above: Row | None = None
    for row in rows:
        if row.label.endswith(", raw"):
            raw = row
        assert raw is not None
        changed = sum(a != b for a, b in zip(row.per_example, raw.per_example, strict=True))
        # A loop the raw answer ended by itself (the model's own end) is a false positive.
        false_loops = sum(
            a == "loop" and b == "stop" for a, b in zip(row.finishes, raw.finishes, strict=True)
        )
        finish = ", ".join(f"{k} {v}" for k, v in sorted(row.finish.items()))
        unlike = (
            "-"
            if above is None or row is raw
            else sum(a != b for a, b in zip(row.texts, above.texts, strict=True))
        )
        above = row
        print(
            f"| {row.label} | {row.wall:.1f} | {row.wall / raw.wall:.2f} "
            f"| {statistics.median(row.ttft):.3f} | {row.output_tokens} "
            f"| {row.after_answer} | {row.valid / n:.3f} "
            f"| {row.scores['schema_compliance'] / n:.3f} | {row.scores['json_exact'] / n:.3f} "
            f"| {row.scores['field_f1'] / n:.3f} | {row.closed} | {changed} | {false_loops} "
            f"| {unlike} | {finish} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="none,mask")
    parser.add_argument("--cost-only", action="store_true")
    measure(parser.parse_args())


if __name__ == "__main__":
    main()
