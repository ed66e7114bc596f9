"""Token parity of OpenVINO GenAI against the float32 reference: greedy token ids on the
built-in EdgeJSON prompts, every runtime fed the same prompt ids.

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/openvino_parity.py
           [--model smollm2-135m-instruct] [--prompts 10] [--steps 64] [--threads 2]
           [--skip fp16,int4,gguf,llama.cpp] [--reference-cache FILE] [--fresh-reference]

The first --prompts built-in EdgeJSON examples are rendered with the model's chat template
as `edgebench run` renders them and tokenized by llama.cpp as edgebench's llama backend
does (special tokens parsed, one BOS); those ids go to every runtime, and each OpenVINO
row says on how many prompts OpenVINO's own tokenizer gives the same ids. Each runtime
then decodes greedily --steps new tokens, end-of-generation ignored, and each sequence is
cut after its first end-of-generation token (inclusive), so an answer that ends is
compared up to its end.
  reference  transformers (torch, float32) on the GGUF de-quantized as `models convert`
             reads it (models/hf_folder.py `gguf_model`, the weights it saves to a
             transformers folder), a plain argmax loop on its KV cache;
  fp16, int4 OpenVINO GenAI on the folders `models convert NAME --to openvino` wrote
             (NAME@openvino-fp16, NAME@openvino-int4; convert them first);
  gguf       OpenVINO GenAI reading the Q4_1 GGUF itself (NAME@openvino);
  llama.cpp  edgebench's llama backend (llama-cpp-python) on the same GGUF, argmax of
             each step's logits.
The reference's ids are kept per prompt in --reference-cache (default
$EDGEBENCH_CACHE/openvino_parity_reference.json), keyed by the model's sha256, the prompt
ids, --steps and the torch and transformers versions: a rerun, or a run over more
prompts, decodes only the prompts it lacks (--fresh-reference decodes them all again).
The reference is the slow part: on 2 cores, uncontended, 26 s to read the GGUF and about
8 s a prompt at 64 steps (prefill 5 ms a prompt token, 90 ms a step: float32 weights
read at every step); the default 10 prompts keep a first run to a few minutes.
Output, flushed as it comes: the reference's line (prompts from the cache, prompts
decoded, its wall time), then one table row per candidate as soon as it finishes, its
wall time (loading included) in the last column, so a stopped run shows what it did.
Per candidate against the reference (`compare`): prompts whose cut sequences are identical,
mean common-prefix length (= the first divergence position on prompts that differ; the
whole length on identical ones), and top-1 agreement over the reference's positions up to
the first divergence: at each of those positions both runtimes had seen the same tokens,
so a step agrees when the candidate's greedy token equals the reference's; counted are
the common prefix (agreeing) plus the divergence step (disagreeing). Teacher-forced
top-1 over every position would need each runtime's logits, which OpenVINO GenAI does not
hand out.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import DecodeSettings
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.backends.openvino import OpenVinoBackend
from edgebench.models.hf_folder import gguf_model, offline, quiet_tools
from edgebench.paths import cache_dir
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.tasks import get_task

Greedy = Callable[[list[int]], list[int]]  # one prompt's ids -> its greedy ids
CANDIDATES = ("fp16", "int4", "gguf", "llama.cpp")


@dataclass(frozen=True)
class Parity:
    """One candidate's greedy ids against the reference's, over the same prompts."""

    prompts: int
    identical: int
    mean_prefix: float  # common-prefix length, averaged over all prompts
    divergences: tuple[int, ...]  # first differing step, on each prompt that differs
    agreed: int  # reference positions before the first divergence
    compared: int  # those plus the divergence steps

    @property
    def top1(self) -> float:
        return self.agreed / self.compared if self.compared else float("nan")


def cut_at_end(ids: Sequence[int], eog: frozenset[int]) -> list[int]:
    """The ids up to and including the first end-of-generation token."""
    for i, token in enumerate(ids):
        if token in eog:
            return list(ids[: i + 1])
    return list(ids)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def compare(reference: list[list[int]], candidate: list[list[int]]) -> Parity:
    """Identical prompts, common prefixes and top-1 agreement up to the first divergence
    (a step past the shorter sequence's end counts as the divergence when the reference
    goes on)."""
    if len(reference) != len(candidate):
        raise ValueError(f"{len(reference)} reference sequences, {len(candidate)} candidates")
    prefixes, divergences, compared = [], [], 0
    for ref, cand in zip(reference, candidate, strict=True):
        p = common_prefix(ref, cand)
        prefixes.append(p)
        compared += p
        if ref != cand:
            divergences.append(p)
            compared += 1 if p < len(ref) else 0
    return Parity(
        prompts=len(reference),
        identical=sum(r == c for r, c in zip(reference, candidate, strict=True)),
        mean_prefix=sum(prefixes) / len(prefixes) if prefixes else float("nan"),
        divergences=tuple(divergences),
        agreed=sum(prefixes),
        compared=compared,
    )


# -- the reference's ids, cached --------------------------------------------------------
@dataclass
class ReferenceCache:
    """The reference's greedy ids, one entry per prompt in one JSON file, keyed by
    `identity` (model, steps, library versions) and the prompt's ids."""

    path: Path
    identity: dict[str, Any]
    entries: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, path: Path, identity: dict[str, Any]) -> ReferenceCache:
        try:
            entries = json.loads(path.read_text())["entries"]
            if not isinstance(entries, dict):
                raise TypeError("entries is not an object")
        except FileNotFoundError:
            entries = {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"# {path}: unreadable ({exc}), decoding anew", file=sys.stderr, flush=True)
            entries = {}
        return cls(path, identity, entries)

    def key(self, prompt_ids: list[int]) -> str:
        text = json.dumps({**self.identity, "prompt_ids": prompt_ids}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, prompt_ids: list[int]) -> list[int] | None:
        entry = self.entries.get(self.key(prompt_ids))
        ids = entry.get("ids") if isinstance(entry, dict) else None
        return [int(t) for t in ids] if isinstance(ids, list) else None

    def put(self, prompt_ids: list[int], ids: list[int], seconds: float) -> None:
        """Written at once (whole file, atomically): a stopped run keeps every prompt done."""
        self.entries[self.key(prompt_ids)] = {
            **self.identity,
            "ids": ids,
            "seconds": round(seconds, 2),
            "saved": f"{datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}",
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps({"entries": self.entries}, indent=1) + "\n")
        os.replace(partial, self.path)


@dataclass
class ReferenceRun:
    cached: int = 0
    decoded: int = 0
    load_s: float = 0.0
    decode_s: float = 0.0


def reference_ids(
    prompt_ids: list[list[int]], cache: ReferenceCache, load: Callable[[], Greedy], fresh: bool
) -> tuple[list[list[int]], ReferenceRun]:
    """The reference's greedy ids per prompt, from the cache where it has them (unless
    `fresh`); the model is loaded only when a prompt is missing."""
    run, greedy, out = ReferenceRun(), None, []
    for n, ids in enumerate(prompt_ids, 1):
        hit = None if fresh else cache.get(ids)
        if hit is None:
            if greedy is None:
                start = time.perf_counter()
                greedy = load()
                run.load_s = time.perf_counter() - start
            start = time.perf_counter()
            hit = greedy(ids)
            seconds = time.perf_counter() - start
            cache.put(ids, hit, seconds)
            run.decoded, run.decode_s = run.decoded + 1, run.decode_s + seconds
            print(f"# reference: prompt {n}/{len(prompt_ids)}, {seconds:.1f} s", file=sys.stderr)
            sys.stderr.flush()
        else:
            run.cached += 1
        out.append(hit)
    return out, run


def library_versions() -> dict[str, str]:
    """The reference's libraries (their numerics are the reference's), without importing."""
    return {name: version(name) for name in ("torch", "transformers")}


# -- the runtimes ---------------------------------------------------------------------
def transformers_greedy(gguf: Path, threads: int, steps: int) -> Greedy:
    import torch

    torch.set_num_threads(threads)
    with offline(), quiet_tools():
        model = gguf_model(gguf)
    model.eval()

    def run(ids: list[int]) -> list[int]:
        with torch.inference_mode():
            step = model(torch.tensor([ids]), use_cache=True)
            tokens: list[int] = []
            for _ in range(steps):
                tokens.append(int(torch.argmax(step.logits[0, -1])))
                step = model(
                    torch.tensor([[tokens[-1]]]),
                    past_key_values=step.past_key_values,
                    use_cache=True,
                )
        return tokens

    return run


def openvino_greedy(path: Path, threads: int, steps: int) -> Greedy:
    backend = OpenVinoBackend(str(path), threads)
    backend.load(2048)
    config = backend._config(DecodeSettings(max_tokens=steps), None)
    config.ignore_eos = True
    config.stop_token_ids = set()

    def run(ids: list[int]) -> list[int]:
        return [int(t) for t in backend.pipe.generate(backend._inputs(ids), config).tokens[0]]

    run.backend = backend  # type: ignore[attr-defined]
    return run


def llama_greedy(gguf: Path, threads: int, steps: int) -> Greedy:
    """edgebench's llama backend, fed token by token: the logits of each step's last token
    (llama-cpp-python's `Llama.eval` keeps no logits unless every position's are asked)."""
    backend = LlamaCppBackend(str(gguf), threads)
    backend.load(2048)

    def run(ids: list[int]) -> list[int]:
        backend.probe_clear()
        backend.probe_eval(ids)
        tokens: list[int] = []
        for _ in range(steps):
            tokens.append(int(np.argmax(backend._last_logits())))
            backend.probe_eval([tokens[-1]])
        return tokens

    return run


# -- the table --------------------------------------------------------------------------
HEADER = (
    "| candidate | identical | mean common prefix | first divergence at "
    "| top-1 to divergence | own tokenizer's ids | wall s |\n|---|---|---|---|---|---|---|"
)


def row(label: str, parity: Parity, own_ids: str, wall_s: float) -> str:
    where = ", ".join(map(str, sorted(parity.divergences))) or "-"
    return (
        f"| {label} | {parity.identical}/{parity.prompts} | {parity.mean_prefix:.1f} | {where} "
        f"| {parity.top1:.3f} ({parity.agreed}/{parity.compared}) | {own_ids} | {wall_s:.0f} |"
    )


def failed_row(label: str, exc: BaseException, wall_s: float) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"| {label} | failed: {type(exc).__name__}: {message} | | | | | {wall_s:.0f} |"


def candidate_row(
    make: Callable[[], Greedy],
    prompts: list[str],
    prompt_ids: list[list[int]],
    reference: list[list[int]],
    eog: frozenset[int],
    label: str,
) -> str:
    """The candidate's row, built from loading it to its last prompt (one runtime
    failing still leaves the others' rows)."""
    start = time.perf_counter()
    try:
        greedy = make()
        backend = getattr(greedy, "backend", None)
        own = "-"
        if backend is not None:
            same = sum(backend.encode(p) == ids for p, ids in zip(prompts, prompt_ids, strict=True))
            own = f"{same}/{len(prompts)}"
        parity = compare(reference, [cut_at_end(greedy(ids), eog) for ids in prompt_ids])
    except Exception as exc:
        return failed_row(label, exc, time.perf_counter() - start)
    return row(label, parity, own, time.perf_counter() - start)


# -- the command ------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip", default="", help="candidates left out: " + ",".join(CANDIDATES))
    parser.add_argument(
        "--reference-cache",
        type=Path,
        default=None,
        help="the reference's ids per prompt (default: "
        "$EDGEBENCH_CACHE/openvino_parity_reference.json)",
    )
    parser.add_argument(
        "--fresh-reference", action="store_true", help="decode the reference again, all prompts"
    )
    args = parser.parse_args(argv)
    for name in ("prompts", "steps", "threads"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name} must be at least 1, not {getattr(args, name)}")
    args.skip = set(filter(None, args.skip.split(",")))
    unknown = sorted(args.skip - set(CANDIDATES))
    if unknown:
        raise SystemExit(f"--skip: unknown {', '.join(unknown)} (known: {', '.join(CANDIDATES)})")
    if args.reference_cache is None:
        args.reference_cache = cache_dir() / "openvino_parity_reference.json"
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    model = model_under_test(args.model)
    task = get_task("edgejson")
    examples, _ = load_examples(task, RunSettings(limit=args.prompts))
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples[: args.prompts]]
    vocab = LlamaCppBackend(str(model.path), args.threads)
    vocab.load_vocab()
    prompt_ids = [vocab._tokenize(p) for p in prompts]
    n_vocab = vocab.L.llama_vocab_n_tokens(vocab.vocab)
    eog = frozenset(t for t in range(n_vocab) if vocab.L.llama_vocab_is_eog(vocab.vocab, t))
    lengths = [len(ids) for ids in prompt_ids]
    print(
        f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{platform.processor() or platform.machine()}, threads {args.threads}; "
        f"{model.path.name}, {len(prompts)} EdgeJSON prompts ({min(lengths)}-{max(lengths)} "
        f"tokens), {args.steps} greedy steps, cut after the first of {sorted(eog)}",
        flush=True,
    )

    versions = library_versions()
    identity = {"model_sha256": model.sha256, "steps": args.steps, **versions}
    cache = ReferenceCache.open(args.reference_cache, identity)
    start = time.perf_counter()
    reference, done = reference_ids(
        prompt_ids,
        cache,
        lambda: transformers_greedy(model.path, args.threads, args.steps),
        args.fresh_reference,
    )
    gc.collect()  # the float32 model (about 540 MB for SmolLM2-135M) goes before the others load
    reference = [cut_at_end(ids, eog) for ids in reference]
    ref_len = sum(map(len, reference)) / len(reference)
    print(
        f"\nreference: transformers fp32 (torch {versions['torch']}, transformers "
        f"{versions['transformers']}), {done.cached} prompts from {args.reference_cache}, "
        f"{done.decoded} decoded (load {done.load_s:.0f} s, decode {done.decode_s:.0f} s), "
        f"wall {time.perf_counter() - start:.0f} s; mean {ref_len:.1f} tokens per prompt "
        f"after the cut\n\n{HEADER}",
        flush=True,
    )

    candidates: dict[str, tuple[str, Callable[[], Greedy]]] = {
        "fp16": (
            "OpenVINO GenAI, fp16 folder",
            lambda: openvino_greedy(
                model_under_test(f"{args.model}@openvino-fp16").path, args.threads, args.steps
            ),
        ),
        "int4": (
            "OpenVINO GenAI, int4 folder",
            lambda: openvino_greedy(
                model_under_test(f"{args.model}@openvino-int4").path, args.threads, args.steps
            ),
        ),
        "gguf": (
            f"OpenVINO GenAI, {model.path.name}",
            lambda: openvino_greedy(model.path, args.threads, args.steps),
        ),
        "llama.cpp": (
            f"llama.cpp, {model.path.name}",
            lambda: llama_greedy(model.path, args.threads, args.steps),
        ),
    }
    for key, (label, make) in candidates.items():
        if key not in args.skip:
            print(candidate_row(make, prompts, prompt_ids, reference, eog, label), flush=True)
            gc.collect()


if __name__ == "__main__":
    main()
