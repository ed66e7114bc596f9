"""Prefix KV caching on EdgeJSON prompts: how much time to first token (TTFT) caching the
shared prompt prefix would save, and whether greedy outputs stay byte-identical and
independent of the example order.

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/prefix_cache.py [--model M]
           [--dataset FILE] [--schemas DIR] [--limit N] [--threads 2] [--gen 48]
           [--repeats 2] [--seed 0] [--check 3] [--no-cold-repeat]
Run for the first report (2026-11-25; ~10 s per example on 2 shared cores):
    flock /tmp/edgebench-cpu.lock .venv/bin/python benchmarks/prefix_cache.py \
        --limit 40 --no-cold-repeat
    flock /tmp/edgebench-cpu.lock .venv/bin/python benchmarks/prefix_cache.py \
        --dataset edgejson_v3/train.jsonl \
        --schemas edgejson_v3/schemas --limit 20 --no-cold-repeat

The prompts are those `edgebench run --task edgejson` renders (the task's loader and
template, the model's chat template through `PromptFormat.render_many`). A prompt's
shared prefix is the rendered text up to and including `Text:\n` (system prompt,
instructions, schema: the same for every example of a schema); in tokens, the longest
common prefix of the prompt's tokens and the prefix text's (BPE may merge across the
boundary).

Every request decodes greedily (up to --gen tokens) with llama.cpp's low-level API, set
up as edgebench's llama backend is (n_batch 512, one sequence, greedy sampler chain):
  cold   clear the KV cache and evaluate the whole prompt (what edgebench does today);
  warm   the schema's prefix tokens, evaluated alone (their own batches), stay in the KV
         cache (one slot); a request drops the positions after the part it shares
         (llama_memory_seq_rm(mem, 0, shared, -1)) and evaluates only the rest. When the
         cached prefix is another schema's, the request first clears the cache and
         evaluates its own prefix: a "prefix build", counted in that request's TTFT.
Passes:
  timing    schema-grouped order; cold (context A) and warm (context B) interleaved per
            example, alternating which goes first, so the machine's drift hits both;
  grouped   warm, schema-grouped order, again (--repeats in all, with the timing pass);
  shuffled  warm, a seeded random order (prefix rebuilt at every schema change), x repeats;
  fresh     warm, but the prefix is evaluated afresh for every request;
  cold      cold, schema-grouped order, once more (is llama.cpp itself repeatable?;
            --no-cold-repeat skips it).
TTFT runs from the start of a request (before tokenizing) to the first sampled token.
Checks: the KV positions (llama_memory_seq_pos_max) after every warm evaluation, one
suffix evaluated with explicit positions against llama_batch_get_one, and the cold loop
against edgebench's own `LlamaCppBackend.generate` on the first --check prompts.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import DecodeSettings
from edgebench.backends.llama_cpp import LlamaCppBackend, build_info
from edgebench.runfolder.records import RunSettings
from edgebench.runner.budget import size_context
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.tasks import get_task
from edgebench.tasks.base import Example

N_BATCH = 512
SMALL_BATCH = 64  # see report(): the logits change below this batch size
PREFIX_END = "Text:\n"
SENTINEL = "\x00EDGEBENCH-PREFIX-END\x00"  # stands in for an example's text


@dataclass(frozen=True)
class Item:
    """One example's rendered prompt and its schema's prefix text."""

    index: int
    schema_id: str
    prompt: str
    prefix: str


@dataclass
class Result:
    """One timed greedy request."""

    ttft_s: float
    prefix_s: float  # the part of ttft_s spent building the prefix KV
    prompt_tokens: int
    evaluated: int  # prompt tokens this request evaluated
    out: bytes
    logits: np.ndarray | None = None  # the first sampled token's logits, when kept


@dataclass
class Pass:
    name: str
    results: dict[int, Result] = field(default_factory=dict)  # by Item.index
    prefix_builds: int = 0
    seconds: float = 0.0


class Model:
    """The weights and vocabulary, loaded once; tokenizing as edgebench's backend does."""

    def __init__(self, L: Any, path: Path) -> None:
        self.L = L
        params = L.llama_model_default_params()
        params.n_gpu_layers = 0
        self.model = L.llama_model_load_from_file(str(path).encode(), params)
        if not self.model:
            raise SystemExit(f"llama.cpp could not load {path}")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        self._piece_buf = ctypes.create_string_buffer(256)

    def tokenize(self, text: str) -> list[int]:
        """`LlamaCppBackend._tokenize`: add_special and parse_special, one BOS at most."""
        L = self.L
        data = text.encode("utf-8")
        buf = (L.llama_token * (len(data) + 8))()
        n = L.llama_tokenize(self.vocab, data, len(data), buf, len(buf), True, True)
        if n < 0:
            raise RuntimeError("llama_tokenize failed")
        tokens = list(buf[:n])
        bos = L.llama_vocab_bos(self.vocab)
        if len(tokens) > 1 and tokens[0] == tokens[1] == bos:
            del tokens[0]
        return tokens

    def piece(self, token: int) -> bytes:
        n = self.L.llama_token_to_piece(
            self.vocab, token, self._piece_buf, len(self._piece_buf), 0, False
        )
        return self._piece_buf.raw[:n]

    def close(self) -> None:
        self.L.llama_model_free(self.model)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Loop:
    """A greedy decoder on its own llama.cpp context (the parameters of
    `LlamaCppBackend.load`), with a one-slot prefix KV cache."""

    def __init__(self, m: Model, n_ctx: int, n_threads: int) -> None:
        L = self.L = m.L
        self.m = m
        cparams = L.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = cparams.n_ubatch = min(N_BATCH, n_ctx)
        cparams.n_seq_max = 1
        cparams.n_threads = cparams.n_threads_batch = n_threads
        cparams.no_perf = False
        self.ctx = L.llama_init_from_model(m.model, cparams)
        if not self.ctx:
            raise SystemExit("llama.cpp could not create a context")
        self.mem = L.llama_get_memory(self.ctx)
        self.sampler = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        L.llama_sampler_chain_add(self.sampler, L.llama_sampler_init_greedy())
        self.cached: tuple[int, ...] | None = None  # the prefix whose KV is cached
        self.valid = 0  # how many of its tokens are still in the cache
        self.position_checks = 0

    def decode(self, tokens: Sequence[int]) -> None:
        """`LlamaCppBackend._decode`: batches of n_batch via llama_batch_get_one, whose
        positions llama.cpp continues from the sequence's last position in the cache."""
        L = self.L
        array = (L.llama_token * len(tokens))(*tokens)
        n_batch = L.llama_n_batch(self.ctx)
        for start in range(0, len(tokens), n_batch):
            count = min(n_batch, len(tokens) - start)
            pointer = ctypes.cast(
                ctypes.addressof(array) + start * ctypes.sizeof(L.llama_token),
                ctypes.POINTER(L.llama_token),
            )
            rc = L.llama_decode(self.ctx, L.llama_batch_get_one(pointer, count))
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")

    def decode_at(self, tokens: Sequence[int], first_pos: int) -> None:
        """The same tokens in one batch with explicit positions (output: last only)."""
        L = self.L
        batch = L.llama_batch_init(len(tokens), 0, 1)
        try:
            for i, token in enumerate(tokens):
                batch.token[i] = token
                batch.pos[i] = first_pos + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = i == len(tokens) - 1
            batch.n_tokens = len(tokens)
            rc = L.llama_decode(self.ctx, batch)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
        finally:
            L.llama_batch_free(batch)

    def expect_positions(self, last: int) -> None:
        """Sequence 0 holds positions 0..last, no more, no fewer."""
        lo = self.L.llama_memory_seq_pos_min(self.mem, 0)
        hi = self.L.llama_memory_seq_pos_max(self.mem, 0)
        if (lo, hi) != ((0, last) if last >= 0 else (-1, -1)):
            raise AssertionError(f"KV positions {lo}..{hi}, expected 0..{last}")
        self.position_checks += 1

    def clear(self) -> None:
        self.L.llama_memory_clear(self.mem, True)
        self.cached, self.valid = None, 0

    def build_prefix(self, prefix: tuple[int, ...]) -> None:
        self.clear()
        self.decode(prefix)
        self.expect_positions(len(prefix) - 1)
        self.cached, self.valid = prefix, len(prefix)

    def reuse(self, tokens: list[int], prefix: tuple[int, ...]) -> int:
        """Drop the cached positions after what `tokens` shares with `prefix`; returns
        how many positions are kept (at least one token is left to evaluate)."""
        shared = min(common_prefix(tokens, prefix), len(tokens) - 1)
        if not self.L.llama_memory_seq_rm(self.mem, 0, shared, -1):
            raise RuntimeError("llama_memory_seq_rm failed")
        self.expect_positions(shared - 1)
        self.valid = min(self.valid, shared)
        return shared

    def last_logits(self) -> np.ndarray:
        pointer = self.L.llama_get_logits_ith(self.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.m.n_vocab,))

    def request(
        self,
        prompt: str,
        prefix: tuple[int, ...] | None,
        gen: int,
        *,
        fresh: bool = False,
        keep_logits: bool = False,
    ) -> Result:
        """Greedy decoding of `prompt`: cold (`prefix` None) or warm on `prefix`'s KV
        (built first when not cached, or always when `fresh`)."""
        L = self.L
        t_start = time.perf_counter()
        tokens = self.m.tokenize(prompt)
        prefix_s = 0.0
        if prefix is None:
            self.clear()
            evaluated = tokens
        else:
            shared = min(common_prefix(tokens, prefix), len(tokens) - 1)
            if fresh or self.cached != prefix or self.valid < shared:
                t_prefix = time.perf_counter()
                self.build_prefix(prefix)
                prefix_s = time.perf_counter() - t_prefix
            shared = self.reuse(tokens, prefix)
            evaluated = tokens[shared:]
        self.decode(evaluated)
        if prefix is not None:
            self.expect_positions(len(tokens) - 1)
        L.llama_sampler_reset(self.sampler)
        token = L.llama_sampler_sample(self.sampler, self.ctx, -1)
        t_first = time.perf_counter()
        logits = self.last_logits().copy() if keep_logits else None
        out = bytearray()
        n_out = 0
        while not L.llama_vocab_is_eog(self.m.vocab, token):
            out += self.m.piece(token)
            n_out += 1
            if n_out >= gen:
                break
            self.decode([token])
            token = L.llama_sampler_sample(self.sampler, self.ctx, -1)
        return Result(
            ttft_s=t_first - t_start,
            prefix_s=prefix_s,
            prompt_tokens=len(tokens),
            evaluated=len(evaluated),
            out=bytes(out),
            logits=logits,
        )

    def close(self) -> None:
        self.L.llama_sampler_free(self.sampler)
        self.L.llama_free(self.ctx)


# -- data ---------------------------------------------------------------------------------
def render(model: Any, examples: list[Example]) -> list[Item]:
    """Each example's prompt as a run renders it, and its schema's prefix: the prompt of
    the schema's first example with a sentinel for the text, cut at the sentinel."""
    task = get_task("edgejson")
    firsts: dict[str, Example] = {}
    for example in examples:
        firsts.setdefault(example.schema_id, example)
    built = [task.build_prompt(ex) for ex in examples]
    built += [task.build_prompt(replace(ex, text=SENTINEL)) for ex in firsts.values()]
    rendered = model.prompt_format.render_many(built)
    prompts, probes = rendered[: len(examples)], rendered[len(examples) :]
    prefixes = {s: probe.split(SENTINEL)[0] for s, probe in zip(firsts, probes, strict=True)}
    items = []
    for i, (example, prompt) in enumerate(zip(examples, prompts, strict=True)):
        prefix = prefixes[example.schema_id]
        if not prefix.endswith(PREFIX_END) or not prompt.startswith(prefix):
            raise SystemExit(f"example {example.id}: prompt does not start with its prefix")
        items.append(Item(i, example.schema_id, prompt, prefix))
    return items


# -- passes -------------------------------------------------------------------------------
def run_pass(
    name: str,
    loop: Loop,
    items: list[Item],
    prefixes: dict[str, tuple[int, ...]] | None,
    gen: int,
    *,
    fresh: bool = False,
) -> Pass:
    """Every item through `loop`, in this order: cold (`prefixes` None) or warm."""
    result = Pass(name)
    loop.clear()
    t0 = time.perf_counter()
    for item in items:
        prefix = None if prefixes is None else prefixes[item.schema_id]
        r = loop.request(item.prompt, prefix, gen, fresh=fresh)
        result.results[item.index] = r
        result.prefix_builds += r.prefix_s > 0
    result.seconds = time.perf_counter() - t0
    progress(f"{name}: {len(items)} requests in {result.seconds:.0f} s")
    return result


def timing_pass(
    cold: Loop, warm: Loop, items: list[Item], prefixes: dict[str, tuple[int, ...]], gen: int
) -> tuple[Pass, Pass, dict[int, float]]:
    """Cold and warm per example, interleaved; also the first token's max |logit
    difference| between the two."""
    passes = Pass("cold (timing)"), Pass("warm grouped (timing)")
    diffs: dict[int, float] = {}
    warm.clear()
    t0 = time.perf_counter()
    for n, item in enumerate(items):
        runs: list[tuple[int, Callable[[], Result]]] = [
            (0, lambda item=item: cold.request(item.prompt, None, gen, keep_logits=True)),
            (
                1,
                lambda item=item: warm.request(
                    item.prompt, prefixes[item.schema_id], gen, keep_logits=True
                ),
            ),
        ]
        for which, run in runs if n % 2 == 0 else runs[::-1]:
            passes[which].results[item.index] = run()
        a, b = (p.results[item.index] for p in passes)
        assert a.logits is not None and b.logits is not None
        diffs[item.index] = float(np.max(np.abs(a.logits - b.logits)))
        a.logits = b.logits = None
        passes[1].prefix_builds += b.prefix_s > 0
    for p in passes:
        p.seconds = time.perf_counter() - t0
    progress(f"timing: {len(items)} cold + warm pairs in {passes[0].seconds:.0f} s")
    return passes[0], passes[1], diffs


def check_positions(loop: Loop, item: Item, prefix: tuple[int, ...]) -> tuple[bool, float]:
    """Warm logits with explicit positions == with llama_batch_get_one? And the largest
    |difference| from the cold logits."""
    tokens = loop.m.tokenize(item.prompt)
    loop.clear()
    loop.decode(tokens)
    cold = loop.last_logits().copy()
    loop.build_prefix(prefix)
    shared = loop.reuse(tokens, prefix)
    loop.decode_at(tokens[shared:], shared)
    loop.expect_positions(len(tokens) - 1)
    explicit = loop.last_logits().copy()
    loop.reuse(tokens, prefix)
    loop.decode(tokens[shared:])
    loop.expect_positions(len(tokens) - 1)
    implicit = loop.last_logits().copy()
    loop.clear()
    return bool(np.array_equal(explicit, implicit)), float(np.max(np.abs(implicit - cold)))


def check_backend(
    path: Path, n_ctx: int, threads: int, gen: int, items: list[Item], cold: Pass
) -> str:
    """edgebench's own backend on the first prompts: the same text as the cold loop?"""
    if not items:
        return "skipped"
    backend = LlamaCppBackend(str(path), n_threads=threads)
    try:
        backend.load(n_ctx)
        same = prefix = 0
        for item in items:
            text = backend.generate(item.prompt, DecodeSettings(max_tokens=gen)).text
            ours = cold.results[item.index].out.decode("utf-8", "replace")
            same += text == ours
            prefix += text != ours and ours.startswith(text)  # an answer-end policy
    finally:
        backend.close()
    return f"{same}/{len(items)} identical texts" + (
        f", {prefix} a shorter prefix of it (ended early)" if prefix else ""
    )


# -- report -------------------------------------------------------------------------------
def progress(message: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def timing_row(p: Pass) -> str:
    rs = list(p.results.values())
    ttft = [r.ttft_s for r in rs]
    builds = sum(r.prefix_s for r in rs)
    cells = [
        p.name,
        ms(statistics.median(ttft)),
        ms(statistics.fmean(ttft)),
        ms(statistics.fmean([r.ttft_s - r.prefix_s for r in rs])),
        f"{sum(ttft):.2f}",
        f"{p.prefix_builds} / {builds:.2f}",
        f"{statistics.fmean([r.evaluated for r in rs]):.0f}",
    ]
    return "| " + " | ".join(cells) + " |"


def compare(a: Pass, b: Pass) -> tuple[int, int]:
    """(identical outputs, examples) between two passes over the same items."""
    same = sum(a.results[i].out == b.results[i].out for i in a.results)
    return same, len(a.results)


def report(
    args: argparse.Namespace,
    info: dict[str, Any],
    items: list[Item],
    prefix_stats: dict[str, Any],
    checks: dict[str, str],
    cold: Pass,
    warm: Pass,
    diffs: dict[int, float],
    extra: list[Pass],
) -> None:
    print(f"\n## Prefix KV cache: {info['dataset']}\n")
    for key in ("date", "model", "runtime", "context", "prompts", "prefix"):
        print(f"- {key}: {info[key]}")
    print(f"- {prefix_stats['line']}")
    for key, value in checks.items():
        print(f"- check, {key}: {value}")

    print("\nTTFT (ms; from the request's start, tokenizing included, to the first token)\n")
    print(
        "| pass | TTFT p50 | TTFT mean | mean excl. prefix builds | TTFT total s "
        "| prefix builds n / s | prompt tokens evaluated (mean) |"
    )
    print("|---|---|---|---|---|---|---|")
    for p in [cold, warm, *extra]:
        print(timing_row(p))
    c = [r.ttft_s for r in cold.results.values()]
    w = [r.ttft_s for r in warm.results.values()]
    w_steady = [r.ttft_s - r.prefix_s for r in warm.results.values()]
    print(
        f"\nSaving, timing pass (cold vs warm grouped, interleaved): p50 "
        f"{1 - statistics.median(w) / statistics.median(c):.1%}, mean "
        f"{1 - statistics.fmean(w) / statistics.fmean(c):.1%}; total prefill (sum of TTFT) "
        f"{sum(c):.2f} s -> {sum(w):.2f} s = {1 - sum(w) / sum(c):.1%} saved with the "
        f"{warm.prefix_builds} prefix builds counted, "
        f"{1 - sum(w_steady) / sum(c):.1%} without them (every prefix already cached)"
    )

    print(f"\nDeterminism (greedy, up to {args.gen} tokens, outputs compared as bytes)\n")
    warm_passes = [p for p in extra if p.name.startswith("warm")]
    pairs = [(warm, p) for p in warm_passes]
    shuffled = [p for p in warm_passes if p.name.startswith("warm shuffled rep")]
    pairs += list(itertools.pairwise(shuffled))
    pairs += [(cold, p) for p in extra if p.name.startswith("cold")]
    for a, b in pairs:
        same, n = compare(a, b)
        print(f"- {a.name} vs {b.name}: {same}/{n} identical")
    all_same = all(compare(warm, p)[0] == len(items) for p in warm_passes)
    print(f"- all {1 + len(warm_passes)} warm passes byte-identical: {'yes' if all_same else 'NO'}")
    differ = [i for i in cold.results if cold.results[i].out != warm.results[i].out]
    where = [common_prefix(cold.results[i].out, warm.results[i].out) for i in differ]
    print(
        f"- cold vs warm grouped: {len(differ)}/{len(items)} outputs differ"
        + (f" (first differing byte: median {statistics.median(where):.0f})" if where else "")
    )
    d = list(diffs.values())
    print(
        f"- first-token logits, max |cold - warm| per example: median "
        f"{statistics.median(d):.2g}, max {max(d):.2g}; exactly equal in "
        f"{sum(x == 0 for x in d)}/{len(d)}"
    )
    # Seen while writing this: the logits change with the size of the batch that
    # computes them (below SMALL_BATCH tokens, other kernels). Cold's last batch is the
    # prompt's tail beyond the last multiple of n_batch; warm's is the part after the prefix.
    print(f"- by the size of the last prompt batch (small: < {SMALL_BATCH} tokens):")
    groups: dict[str, list[int]] = {}
    for i in cold.results:
        n, suffix = cold.results[i].prompt_tokens, warm.results[i].evaluated
        cold_last, warm_last = (n - 1) % N_BATCH + 1, (suffix - 1) % N_BATCH + 1
        key = (
            f"cold last batch {'small' if cold_last < SMALL_BATCH else 'large'}, "
            f"warm {'small' if warm_last < SMALL_BATCH else 'large'}"
        )
        groups.setdefault(key, []).append(i)
    for key, members in sorted(groups.items()):
        equal = sum(diffs[i] == 0 for i in members)
        same = sum(cold.results[i].out == warm.results[i].out for i in members)
        print(
            f"  - {key}: {len(members)} examples, first-token logits equal in {equal}, "
            f"outputs identical in {same}"
        )


# -- main ---------------------------------------------------------------------------------
def measure(args: argparse.Namespace) -> None:
    started = datetime.now(timezone.utc)
    load0 = os.getloadavg()[0]
    model = model_under_test(args.model)
    if model.backend != "llama":
        raise SystemExit("this benchmark needs a GGUF model (llama backend)")
    task = get_task("edgejson")
    settings = RunSettings(dataset=args.dataset, schemas=args.schemas, limit=args.limit)
    examples, record = load_examples(task, settings)
    examples = examples[: args.limit] if args.limit else examples
    items = render(model, examples)

    # The backend first: it quiets llama.cpp's log for this process.
    check_items = items[: args.check]
    quiet = LlamaCppBackend(str(model.path), n_threads=args.threads)
    L = quiet.L
    m = Model(L, model.path)
    try:
        prefixes = {i.schema_id: tuple(m.tokenize(i.prefix)) for i in items}
        counts = [len(m.tokenize(i.prompt)) for i in items]
        n_ctx = size_context(examples, counts, [args.gen] * len(items), None, model.n_ctx_train)
        shared = [
            min(common_prefix(m.tokenize(i.prompt), prefixes[i.schema_id]), c - 1)
            for i, c in zip(items, counts, strict=True)
        ]
        merged = sum(s < len(prefixes[i.schema_id]) for i, s in zip(items, shared, strict=True))
        plens = sorted(len(p) for p in prefixes.values())
        build = build_info(L)
        info = {
            "dataset": f"{record.path} (schemas {record.schemas})",
            "date": started.strftime("%Y-%m-%d %H:%M UTC"),
            "model": f"{model.label} ({model.path.name})",
            "runtime": f"llama-cpp-python {build['llama_cpp_python']}, "
            f"llama.cpp {build['llama_version']}, threads {args.threads}, n_batch {N_BATCH}",
            "context": f"n_ctx {n_ctx} (edgebench's sizing for prompts + {args.gen} tokens)",
            "prompts": f"{len(items)} examples, {len(prefixes)} schemas; prompt tokens "
            f"min {min(counts)}, median {statistics.median(counts):.0f}, max {max(counts)}",
            "prefix": f"prefix tokens per schema min {plens[0]}, median "
            f"{statistics.median(plens):.0f}, max {plens[-1]}; shared part of a prompt: "
            f"mean {statistics.fmean(s / c for s, c in zip(shared, counts, strict=True)):.1%}",
        }
        prefix_stats = {
            "line": f"BPE merge across the `Text:\\n` boundary (shared < prefix tokens): "
            f"{merged}/{len(items)} examples"
        }

        loop_a, loop_b = Loop(m, n_ctx, args.threads), Loop(m, n_ctx, args.threads)
        try:
            grouped = sorted(items, key=lambda i: i.schema_id)  # stable: dataset order within
            shuffled = list(items)
            random.Random(args.seed).shuffle(shuffled)
            # Warm-up, untimed: both contexts, both paths.
            loop_a.request(items[0].prompt, None, 4)
            loop_b.request(items[0].prompt, prefixes[items[0].schema_id], 4)

            checks: dict[str, str] = {}
            same, worst = check_positions(loop_b, items[0], prefixes[items[0].schema_id])
            checks["explicit positions vs llama_batch_get_one (first example)"] = (
                f"logits {'bit-identical' if same else 'DIFFERENT'}; warm vs cold logits "
                f"max |diff| {worst:.2g}"
            )
            cold, warm, diffs = timing_pass(loop_a, loop_b, grouped, prefixes, args.gen)
            extra: list[Pass] = []
            for rep in range(2, args.repeats + 1):
                extra.append(
                    run_pass(f"warm grouped rep {rep}", loop_b, grouped, prefixes, args.gen)
                )
            for rep in range(1, args.repeats + 1):
                extra.append(
                    run_pass(f"warm shuffled rep {rep}", loop_b, shuffled, prefixes, args.gen)
                )
            extra.append(
                run_pass("warm fresh (shuffled)", loop_b, shuffled, prefixes, args.gen, fresh=True)
            )
            if args.cold_repeat:
                extra.append(run_pass("cold rep 2", loop_a, grouped, None, args.gen))
            checks["KV positions after warm evaluations"] = (
                f"{loop_b.position_checks} checks, all as expected"
            )
        finally:
            loop_a.close()
            loop_b.close()
        checks["edgebench LlamaCppBackend.generate vs the cold loop"] = check_backend(
            model.path, n_ctx, args.threads, args.gen, check_items, cold
        )
    finally:
        m.close()
        quiet.close()
    elapsed = (datetime.now(timezone.utc) - started).total_seconds()
    info["date"] += f", {elapsed:.0f} s; load average 1 min: {load0:.1f} at start, "
    info["date"] += f"{os.getloadavg()[0]:.1f} at end ({os.cpu_count()} CPUs)"
    report(args, info, items, prefix_stats, checks, cold, warm, diffs, extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="registry name or .gguf path (default: edgebench's)")
    parser.add_argument("--dataset", type=Path, help="EdgeJSON JSONL (default: built-in test)")
    parser.add_argument("--schemas", type=Path, help="schema folder (default: beside it)")
    parser.add_argument("--limit", type=int, help="the first N examples")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gen", type=int, default=48, help="greedy tokens per request")
    parser.add_argument("--repeats", type=int, default=2, help="warm grouped/shuffled passes")
    parser.add_argument("--seed", type=int, default=0, help="of the shuffled order")
    parser.add_argument("--check", type=int, default=3, help="prompts to check via edgebench")
    parser.add_argument(
        "--no-cold-repeat", dest="cold_repeat", action="store_false", help="skip cold rep 2"
    )
    measure(parser.parse_args())


if __name__ == "__main__":
    main()
