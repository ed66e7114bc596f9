"""Token parity of OpenVINO GenAI against the float32 reference: greedy token ids on the
built-in EdgeJSON prompts, every runtime fed the same prompt ids.

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/openvino_parity.py
           [--model smollm2-135m-instruct] [--prompts 20] [--steps 64] [--threads 2]
           [--skip fp16,int4,...]

The first --prompts built-in EdgeJSON examples are rendered with the model's chat template
as `edgebench run` renders them and tokenized by llama.cpp as edgebench's llama backend
does (special tokens parsed, one BOS); those ids go to every runtime, and the script says
whether OpenVINO's own tokenizer gives the same ids. Each runtime then decodes greedily
--steps new tokens, end-of-generation ignored, and each sequence is cut after its first
end-of-generation token (inclusive), so an answer that ends is compared up to its end.
  reference  transformers (torch, float32) on the GGUF de-quantized to a transformers folder
             (models/hf_folder.py, as `models convert` starts), a plain argmax loop on its
             KV cache;
  fp16, int4 OpenVINO GenAI on the folders `models convert NAME --to openvino` wrote
             (NAME@openvino-fp16, NAME@openvino-int4; convert them first);
  gguf       OpenVINO GenAI reading the Q4_1 GGUF itself (NAME@openvino);
  llama.cpp  llama-cpp-python on the same GGUF, argmax of each step's logits.
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
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from edgebench.backends.base import DecodeSettings
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.backends.openvino import OpenVinoBackend
from edgebench.models.hf_folder import gguf_to_transformers, offline, quiet_tools
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.tasks import get_task

Greedy = Callable[[list[list[int]]], list[list[int]]]


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


# -- the runtimes ---------------------------------------------------------------------
def transformers_greedy(gguf: Path, threads: int, steps: int) -> Greedy:
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as tmp, offline(), quiet_tools():
        gguf_to_transformers(gguf, Path(tmp) / "hf")
        model = AutoModelForCausalLM.from_pretrained(Path(tmp) / "hf", dtype=torch.float32)
    model.eval()

    def run(prompt_ids: list[list[int]]) -> list[list[int]]:
        out = []
        with torch.inference_mode():
            for ids in prompt_ids:
                step = model(torch.tensor([ids]), use_cache=True)
                tokens: list[int] = []
                for _ in range(steps):
                    tokens.append(int(torch.argmax(step.logits[0, -1])))
                    step = model(
                        torch.tensor([[tokens[-1]]]),
                        past_key_values=step.past_key_values,
                        use_cache=True,
                    )
                out.append(tokens)
        return out

    return run


def openvino_greedy(path: Path, threads: int, steps: int) -> Greedy:
    backend = OpenVinoBackend(str(path), threads)
    backend.load(2048)

    def run(prompt_ids: list[list[int]]) -> list[list[int]]:
        config = backend._config(DecodeSettings(max_tokens=steps), None)
        config.ignore_eos = True
        config.stop_token_ids = set()
        return [
            [int(t) for t in backend.pipe.generate(backend._inputs(ids), config).tokens[0]]
            for ids in prompt_ids
        ]

    run.backend = backend  # type: ignore[attr-defined]
    return run


def llama_greedy(gguf: Path, threads: int, steps: int) -> Greedy:
    from llama_cpp import Llama

    llm = Llama(model_path=str(gguf), n_ctx=2048, n_threads=threads, n_batch=512, verbose=False)

    def run(prompt_ids: list[list[int]]) -> list[list[int]]:
        out = []
        for ids in prompt_ids:
            llm.reset()
            llm.eval(ids)
            tokens: list[int] = []
            for _ in range(steps):
                tokens.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
                llm.eval([tokens[-1]])
            out.append(tokens)
        return out

    return run


def candidate(
    make: Callable[[], Greedy],
    prompts: list[str],
    prompt_ids: list[list[int]],
    reference: list[list[int]],
    eog: frozenset[int],
    label: str,
) -> Parity:
    greedy = make()
    backend = getattr(greedy, "backend", None)
    if backend is not None:
        own = sum(backend.encode(p) == ids for p, ids in zip(prompts, prompt_ids, strict=True))
        print(f"# {label}: its tokenizer gives llama.cpp's ids on {own}/{len(prompts)}")
    return compare(reference, [cut_at_end(out, eog) for out in greedy(prompt_ids)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip", default="", help="candidates left out: fp16,int4,gguf,llama.cpp")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    model = model_under_test(args.model)
    task = get_task("edgejson")
    examples, _ = load_examples(task, RunSettings(limit=args.prompts))
    prompts = [model.prompt_format.render(task.build_prompt(ex)) for ex in examples[: args.prompts]]
    vocab = LlamaCppBackend(str(model.path), args.threads)
    vocab.count_tokens(prompts[:1])  # loads the vocabulary only
    prompt_ids = [vocab._tokenize(p) for p in prompts]
    n_vocab = vocab.L.llama_vocab_n_tokens(vocab.vocab)
    eog = frozenset(t for t in range(n_vocab) if vocab.L.llama_vocab_is_eog(vocab.vocab, t))
    lengths = [len(ids) for ids in prompt_ids]
    print(
        f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{platform.processor() or platform.machine()}, threads {args.threads}; "
        f"{model.path.name}, {len(prompts)} EdgeJSON prompts ({min(lengths)}-{max(lengths)} "
        f"tokens), {args.steps} greedy steps, cut after the first of {sorted(eog)}"
    )

    candidates: dict[str, Callable[[], Greedy]] = {
        "fp16": lambda: openvino_greedy(
            model_under_test(f"{args.model}@openvino-fp16").path, args.threads, args.steps
        ),
        "int4": lambda: openvino_greedy(
            model_under_test(f"{args.model}@openvino-int4").path, args.threads, args.steps
        ),
        "gguf": lambda: openvino_greedy(model.path, args.threads, args.steps),
        "llama.cpp": lambda: llama_greedy(model.path, args.threads, args.steps),
    }
    labels = {
        "fp16": "OpenVINO GenAI, fp16 folder",
        "int4": "OpenVINO GenAI, int4 folder",
        "gguf": f"OpenVINO GenAI, {model.path.name}",
        "llama.cpp": f"llama.cpp, {model.path.name}",
    }
    start = time.perf_counter()
    reference = transformers_greedy(model.path, args.threads, args.steps)(prompt_ids)
    reference = [cut_at_end(ids, eog) for ids in reference]
    print(f"# reference (transformers fp32): {time.perf_counter() - start:.0f} s", flush=True)
    results: dict[str, Parity] = {}
    for key, make in candidates.items():
        if key in skip:
            continue
        start = time.perf_counter()
        try:
            results[key] = candidate(make, prompts, prompt_ids, reference, eog, labels[key])
        except Exception as exc:  # one runtime failing still reports the others
            print(f"# {labels[key]}: failed: {type(exc).__name__}: {exc}", flush=True)
        print(f"# {labels[key]}: {time.perf_counter() - start:.0f} s", flush=True)
        gc.collect()

    ref_len = sum(map(len, reference)) / len(reference)
    print(f"\nreference: transformers fp32, mean {ref_len:.1f} tokens per prompt after the cut")
    print(
        "| candidate | identical | mean common prefix | first divergence at | top-1 to divergence |"
    )
    print("|---|---|---|---|---|")
    for key, r in results.items():
        where = ", ".join(map(str, sorted(r.divergences))) or "-"
        print(
            f"| {labels[key]} | {r.identical}/{r.prompts} | {r.mean_prefix:.1f} | {where} | "
            f"{r.top1:.3f} ({r.agreed}/{r.compared}) |"
        )


if __name__ == "__main__":
    main()
