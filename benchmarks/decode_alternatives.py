"""Could the `none` arm decode its runaway answers faster without changing them?

Usage: python benchmarks/decode_alternatives.py [--limit 20] [--threads 2] [--drafts 2,4,8]

Most of a full `none` run is decode of answers that write the schema back until their
budget, copying spans of the prompt. Two ways to spend less time on those tokens, each
measured here against greedy decoding as `edgebench run` does it (flash attention as
llama.cpp picks it, one token per model pass):

- **flash attention off** (llama.cpp's other attention path);
- **prompt-lookup decoding** (speculative decoding without a draft model): the last
  1-3 tokens are looked up earlier in the prompt and answer, the K tokens that followed
  them are verified in one batch with the logits of every position, and the longest
  prefix that greedy decoding would have picked is kept, plus the next token. On the
  same logits this gives the same tokens with fewer passes.

Every variant decodes the same prompts with the run's budgets (raw: to the model's end
or the budget, no answer-ending policy) in one process, one context each, variants taking
turns per prompt. Printed per variant: decode seconds, x the run's decode, model passes,
and answers byte-identical to the run's (a benchmark must not change what it measures).
"""

from __future__ import annotations

import argparse
import platform
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from edgebench.backends.llama_cpp import LlamaCppBackend, build_info
from edgebench.runfolder.records import RunSettings
from edgebench.runner.budget import plan_budget, reference_text, size_context
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.tasks import get_task

N_BATCH = 512
MAX_NGRAM = 3


@dataclass
class Variant:
    label: str
    flash_attn: int
    draft: int = 0  # tokens proposed per pass; 0: one token per pass
    ctx: Any = None
    batch: Any = None
    seconds: float = 0.0
    passes: int = 0
    outputs: list[list[int]] = field(default_factory=list)


class Decoder:
    """Greedy decoding straight on llama.cpp's API, one context per variant."""

    def __init__(self, model_path: str, threads: int) -> None:
        self.backend = LlamaCppBackend(model_path, threads)
        self.backend.count_tokens(["x"])  # loads the vocabulary
        self.backend._load_model(vocab_only=False)
        self.L = self.backend.L
        self.n_vocab = self.L.llama_vocab_n_tokens(self.backend.vocab)
        self.threads = threads

    def context(self, variant: Variant, n_ctx: int) -> None:
        L = self.L
        params = L.llama_context_default_params()
        params.n_ctx, params.n_batch, params.n_ubatch = n_ctx, N_BATCH, N_BATCH
        params.n_threads = params.n_threads_batch = self.threads
        params.flash_attn_type = variant.flash_attn
        variant.ctx = L.llama_init_from_model(self.backend.model, params)
        variant.batch = L.llama_batch_init(N_BATCH, 0, 1)

    def _eval(self, v: Variant, tokens: list[int], pos: int, every_logit: bool) -> None:
        batch = v.batch
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos + i, 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = every_logit or i == len(tokens) - 1
        if self.L.llama_decode(v.ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    def _best(self, v: Variant, i: int) -> int:
        row = self.L.llama_get_logits_ith(v.ctx, i)
        return int(np.argmax(np.ctypeslib.as_array(row, shape=(self.n_vocab,))))

    def generate(self, v: Variant, prompt: list[int], max_tokens: int) -> None:
        L = self.L
        L.llama_memory_clear(L.llama_get_memory(v.ctx), True)
        for start in range(0, len(prompt), N_BATCH):
            self._eval(v, prompt[start : start + N_BATCH], start, False)
        t0 = time.perf_counter()
        out: list[int] = []
        pos, token = len(prompt), self._best(v, -1)
        while not L.llama_vocab_is_eog(self.backend.vocab, token):
            out.append(token)
            if len(out) >= max_tokens:
                break
            draft = lookup(prompt + out, min(v.draft, max_tokens - len(out)))
            self._eval(v, [token, *draft], pos, bool(draft))
            v.passes += 1
            token = self._best(v, 0 if draft else -1)
            kept = 0
            while kept < len(draft) and token == draft[kept] and len(out) < max_tokens:
                if L.llama_vocab_is_eog(self.backend.vocab, token):
                    break
                out.append(token)
                kept += 1
                token = self._best(v, kept)
            if len(out) >= max_tokens:
                break
            pos += 1 + kept
            if draft:  # drop the rejected draft tokens from the KV cache
                L.llama_memory_seq_rm(L.llama_get_memory(v.ctx), 0, pos, -1)
        v.seconds += time.perf_counter() - t0
        v.outputs.append(out)


def lookup(context: list[int], k: int) -> list[int]:
    """Up to k tokens that followed the most recent earlier occurrence of the context's
    last n tokens (n = 3, 2, 1: the longest that occurs)."""
    if k <= 0:
        return []
    for n in range(MAX_NGRAM, 0, -1):
        tail = context[-n:]
        for start in range(len(context) - n - 1, -1, -1):
            if context[start : start + n] == tail:
                return context[start + n : start + n + k]
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=20, help="prompts, spread over the set")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--drafts", default="2,4,8", help="prompt-lookup draft lengths")
    args = parser.parse_args()

    task = get_task("edgejson")
    dataset, _ = load_examples(task, RunSettings())
    step = max(1, len(dataset) // args.limit)
    examples = dataset[::step][: args.limit]
    model = model_under_test(None)
    decoder = Decoder(str(model.path), args.threads)
    tok = decoder.backend._tokenize
    prompts = [tok(model.prompt_format.render(task.build_prompt(ex))) for ex in examples]
    references = [len(tok(reference_text(ex))) for ex in dataset]
    budget = plan_budget(None, dataset, references)
    budgets = [budget.for_example(ex) for ex in examples]
    n_ctx = size_context(examples, [len(p) for p in prompts], budgets, None, None)

    L = decoder.L
    variants = [Variant("greedy, as edgebench run", L.LLAMA_FLASH_ATTN_TYPE_AUTO)]
    variants.append(Variant("flash attention off", L.LLAMA_FLASH_ATTN_TYPE_DISABLED))
    for k in (int(x) for x in args.drafts.split(",")):
        variants.append(Variant(f"prompt lookup, {k} drafted", L.LLAMA_FLASH_ATTN_TYPE_AUTO, k))
    for v in variants:
        decoder.context(v, n_ctx)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    version = build_info(L)["llama_version"]
    print(f"# {stamp} {platform.node()} threads {args.threads} llama.cpp {version}")
    print(
        f"# {len(examples)} built-in prompts ({min(map(len, prompts))}-{max(map(len, prompts))}"
        f" tokens), budgets {min(budgets)}-{max(budgets)}, n_ctx {n_ctx}",
        flush=True,
    )
    for i, (prompt, max_tokens) in enumerate(zip(prompts, budgets, strict=True)):
        turn = variants[i % len(variants) :] + variants[: i % len(variants)]
        for v in turn:
            decoder.generate(v, prompt, max_tokens)
    base = variants[0]
    tokens = sum(len(o) for o in base.outputs)
    print(f"\n{tokens} output tokens (greedy, as edgebench run)\n")
    print(
        "| variant | decode s | x greedy | model passes | tokens per pass | "
        "answers identical to greedy | first difference (token) |"
    )
    print("|---|---|---|---|---|---|---|")
    for v in variants:
        same = sum(a == b for a, b in zip(v.outputs, base.outputs, strict=True))
        firsts = [first_difference(a, b) for a, b in zip(v.outputs, base.outputs, strict=True)]
        where = sorted(f for f in firsts if f is not None)
        produced = sum(len(o) for o in v.outputs)
        print(
            f"| {v.label} | {v.seconds:.1f} | {v.seconds / base.seconds:.2f} | {v.passes} | "
            f"{produced / max(v.passes, 1):.2f} | {same}/{len(examples)} | "
            f"{', '.join(map(str, where[:6])) or '-'} |"
        )
    for v in variants:
        L.llama_batch_free(v.batch)
        L.llama_free(v.ctx)
    decoder.backend.close()


def first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


if __name__ == "__main__":
    main()
