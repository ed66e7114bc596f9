"""Per-token mask cost and compile time of three grammar engines on the same schemas.

Usage: python benchmarks/mask_engines.py [--task edgejson|deepjson] [--limit N]
       [--engines llguidance,xgrammar,xgrammar-fixed,gbnf] [--threads 2]

The method of MaskBench ("JSONSchemaBench: A Rigorous Benchmark of Structured Outputs for
Language Models", arXiv 2501.10868), on edgebench's default model and built-in data: no
forward pass, only the vocabulary of SmolLM2-135M-Instruct (the registry GGUF, loaded
with `vocab_only`). For each schema of the first N examples every engine compiles it
(timed twice: the first compile, then the same schema again, served from the engine's
cache where it has one); then each example's reference answer, serialized as the schema
modes make the model write it (one line, `json.dumps` separators), tokenized by the
model's tokenizer, is walked through every engine by teacher forcing: at each step the
engine computes its full-vocabulary mask of allowed tokens (timed), the benchmark checks
that the answer's next token is allowed, and the engine advances by it (timed apart). A
last step asks for the mask after the whole answer and checks that end-of-text is
allowed. The engines take turns per example, so they share the machine's state.

Engines:
- llguidance: as the `mask` mode compiles and drives it (`constraints/llguidance_mask.py`:
  fixed separators, lenient fallback; the tokenizer from the llama.cpp vocabulary).
- xgrammar: the `xgrammar` package as OpenVINO GenAI drives the XGrammar inside it (a
  RAW vocabulary of decoded token bytes, end-of-text as stop token, the JSON Schema with
  XGrammar's defaults: any whitespace); `xgrammar-fixed` compiles with the separators the
  other schema modes use. The package stands in for the engine OpenVINO GenAI bundles
  (it may be another version). It needs torch and transformers at import; it is not one
  of edgebench's extras (the script prints how to install it when it is missing).
- gbnf: the grammar the `gbnf` mode builds from the schema (llama-cpp-python's converter)
  in llama.cpp's grammar sampler (`llama_sampler_init_grammar`, then `llama_sampler_apply`
  on a full-vocabulary candidate array and `llama_sampler_accept`). Its first compile is
  the conversion plus llama.cpp's parse; "again" is the parse of the stored text (what a
  run pays: converted grammars are bundled or cached on disk).

Printed: one table (compile ms p50/max, again ms p50, examples walked and rejected,
steps walked, mask µs per token p50/p99/mean, advance µs p50, and the median number of
tokens a mask allows, counted untimed, to show the engines compute comparable masks) and
the rejections with their reasons. Results go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from edgebench.backends.llama_cpp import CandidateArray, LlamaCppBackend
from edgebench.constraints import gbnf
from edgebench.constraints.gbnf_depth import nesting_refusal
from edgebench.constraints.llguidance_mask import (
    JSON_OPTIONS,
    TokenMask,
    compile_schema,
    import_llguidance,
)
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.system.device import device_info
from edgebench.tasks import get_task

ENGINES = ("llguidance", "xgrammar", "xgrammar-fixed", "gbnf")
XGRAMMAR_HINT = (
    "xgrammar is not installed (it is not an edgebench extra): pip install --no-deps "
    "xgrammar==0.2.8 apache-tvm-ffi 'transformers<5' 'huggingface-hub<1' tokenizers "
    "safetensors tqdm filelock, plus torch (a CPU build)"
)


class Refused(Exception):
    """The engine refused a schema, or a token of the answer, or its end."""


class Walker(Protocol):
    """One compiled schema in one engine, walked token by token."""

    def start(self) -> None: ...
    def prepare(self) -> None: ...  # before each mask, untimed
    def mask(self) -> None: ...
    def allows(self, token: int) -> bool: ...
    def allowed_count(self) -> int: ...  # tokens the last mask allows
    def advance(self, token: int) -> None: ...


class Engine(Protocol):
    name: str
    version: str

    def compile(self, schema: dict[str, Any]) -> Walker: ...
    def again(self, schema: dict[str, Any]) -> None: ...


@dataclass
class Vocab:
    """The model's vocabulary as llama.cpp reads it from the GGUF (no weights)."""

    backend: LlamaCppBackend
    n_vocab: int
    eos: int

    @classmethod
    def load(cls, path: str) -> Vocab:
        backend = LlamaCppBackend(path, 1)
        backend.load_vocab()
        L, vocab = backend.L, backend.vocab
        return cls(backend, L.llama_vocab_n_tokens(vocab), L.llama_vocab_eos(vocab))

    def tokens(self, text: str) -> list[int]:
        """`text` as the model writes it after its prompt: no BOS, no special tokens."""
        return self.backend._tokenize(text, special=False)

    def pieces(self) -> list[bytes]:
        """Every token's bytes as the model emits them (empty for control tokens)."""
        buf = ctypes.create_string_buffer(256)
        return [self.backend._piece(t, buf) for t in range(self.n_vocab)]


def popcount(words: np.ndarray) -> int:
    """Set bits of a bitmask of int32 words (bit i of word i // 32 is token i)."""
    return int(np.unpackbits(words.view(np.uint8)).sum())


def answer_text(expected: Any) -> str:
    """The reference answer as the schema modes make the model write it: one line with
    `json.dumps` separators (llguidance_mask.JSON_OPTIONS)."""
    return json.dumps(expected, ensure_ascii=False)


# -- llguidance ----------------------------------------------------------------------


class LlguidanceWalker:
    def __init__(self, matcher: Any, mask: TokenMask) -> None:
        self.matcher, self.buffer = matcher, mask

    def start(self) -> None:
        self.matcher.reset()

    def prepare(self) -> None:
        pass

    def mask(self) -> None:
        self.buffer.fill(self.matcher)

    def allows(self, token: int) -> bool:
        return bool((int(self.buffer.words[token >> 5]) >> (token & 31)) & 1)

    def allowed_count(self) -> int:
        return popcount(self.buffer.words)

    def advance(self, token: int) -> None:
        if not self.matcher.consume_token(token):
            raise Refused(f"llguidance: {self.matcher.get_error()}")


class LlguidanceEngine:
    name = "llguidance"

    def __init__(self, vocab: Vocab) -> None:
        import warnings

        self.llg = import_llguidance()
        self.version = getattr(self.llg, "__version__", "?")
        with warnings.catch_warnings():  # llama_token_get_attr is marked deprecated
            warnings.simplefilter("ignore", DeprecationWarning)
            self.tokenizer = self.llg.llamacpp.lltokenizer_from_vocab(vocab.backend.vocab)
        self.buffer = TokenMask(vocab.n_vocab)

    def compile(self, schema: dict[str, Any]) -> Walker:
        try:
            matcher, _ = compile_schema(self.llg, self.tokenizer, schema)
        except ValueError as exc:
            raise Refused(str(exc)) from None
        return LlguidanceWalker(matcher, self.buffer)

    def again(self, schema: dict[str, Any]) -> None:
        compile_schema(self.llg, self.tokenizer, schema)  # no cache of its own


# -- XGrammar ------------------------------------------------------------------------


class XgrammarWalker:
    def __init__(self, xgr: Any, compiled: Any, bitmask: Any) -> None:
        self.xgr, self.compiled, self.bitmask = xgr, compiled, bitmask
        self.words = bitmask.numpy()[0]  # the same memory, read without torch
        self.matcher: Any = None

    def start(self) -> None:
        self.matcher = self.xgr.GrammarMatcher(self.compiled)

    def prepare(self) -> None:
        pass

    def mask(self) -> None:
        self.matcher.fill_next_token_bitmask(self.bitmask)

    def allows(self, token: int) -> bool:
        return bool((int(self.words[token >> 5]) >> (token & 31)) & 1)

    def allowed_count(self) -> int:
        return popcount(self.words)

    def advance(self, token: int) -> None:
        if not self.matcher.accept_token(token):
            raise Refused(f"xgrammar refused token {token}")


class XgrammarEngine:
    def __init__(self, vocab: Vocab, threads: int, fixed: bool) -> None:
        import xgrammar

        self.xgr = xgrammar
        self.name = "xgrammar-fixed" if fixed else "xgrammar"
        self.version = _package_version("xgrammar")
        info = xgrammar.TokenizerInfo(
            vocab.pieces(),
            xgrammar.VocabType.RAW,
            vocab_size=vocab.n_vocab,
            stop_token_ids=[vocab.eos],
        )
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=threads)
        self.options: dict[str, Any] = (
            {
                "any_whitespace": False,
                "separators": (JSON_OPTIONS["item_separator"], JSON_OPTIONS["key_separator"]),
            }
            if fixed
            else {}
        )
        self.bitmask = xgrammar.allocate_token_bitmask(1, vocab.n_vocab)

    def _compile(self, schema: dict[str, Any]) -> Any:
        try:
            return self.compiler.compile_json_schema(json.dumps(schema), **self.options)
        except Exception as exc:  # XGrammar raises its own errors on schemas it refuses
            raise Refused(f"xgrammar: {str(exc).splitlines()[0]}") from None

    def compile(self, schema: dict[str, Any]) -> Walker:
        return XgrammarWalker(self.xgr, self._compile(schema), self.bitmask)

    def again(self, schema: dict[str, Any]) -> None:
        self._compile(schema)  # GrammarCompiler's cache


# -- llama.cpp GBNF ------------------------------------------------------------------


class GbnfWalker:
    """llama.cpp's grammar sampler over a full-vocabulary candidate array."""

    def __init__(self, L: Any, sampler: Any, candidates: CandidateArray) -> None:
        self.L, self.sampler, self.candidates = L, sampler, candidates

    def start(self) -> None:
        self.L.llama_sampler_reset(self.sampler)

    def prepare(self) -> None:
        self.candidates.refill(0.0)  # the grammar wrote -inf into the last one

    def mask(self) -> None:
        self.L.llama_sampler_apply(self.sampler, self.candidates.pointer)

    def allows(self, token: int) -> bool:
        return bool(np.isfinite(self.candidates.data["logit"][token]))

    def allowed_count(self) -> int:
        return int(np.isfinite(self.candidates.data["logit"]).sum())

    def advance(self, token: int) -> None:
        # only after `allows`: llama.cpp aborts the process on a token its grammar refuses
        self.L.llama_sampler_accept(self.sampler, token)


class GbnfEngine:
    name = "gbnf"

    def __init__(self, vocab: Vocab) -> None:
        self.L, self.vocab = vocab.backend.L, vocab.backend.vocab
        self.version = f"llama-cpp-python {self.L.__version__}"
        self.candidates = CandidateArray(self.L, vocab.n_vocab)
        self.samplers: list[Any] = []
        self.last_text = ""

    def _parse(self, text: str) -> Any:
        sampler = self.L.llama_sampler_init_grammar(self.vocab, text.encode("utf-8"), b"root")
        if not sampler:
            raise Refused("llama.cpp could not parse the grammar")
        return sampler

    def compile(self, schema: dict[str, Any]) -> Walker:
        too_deep = nesting_refusal(schema)
        if too_deep is not None:
            raise Refused(too_deep)
        try:
            text = gbnf.convert(schema)
        except Exception as exc:  # the converter raises on schemas it cannot express
            raise Refused(f"json_schema_to_gbnf: {exc}") from None
        sampler = self._parse(text)
        self.samplers.append(sampler)
        self.last_text = text
        return GbnfWalker(self.L, sampler, self.candidates)

    def again(self, schema: dict[str, Any]) -> None:
        """The stored text parsed again (called right after `compile` of `schema`)."""
        self.L.llama_sampler_free(self._parse(self.last_text))

    def close(self) -> None:
        for sampler in self.samplers:
            self.L.llama_sampler_free(sampler)


# -- the walk ------------------------------------------------------------------------


@dataclass
class Tally:
    """What one engine did over the run."""

    compile_ms: list[float] = field(default_factory=list)
    again_ms: list[float] = field(default_factory=list)
    mask_ns: list[int] = field(default_factory=list)
    advance_ns: list[int] = field(default_factory=list)
    allowed: list[int] = field(default_factory=list)  # tokens each mask allows (untimed)
    walked: int = 0
    rejected: dict[str, str] = field(default_factory=dict)  # example id -> reason


def walk(walker: Walker, tokens: list[int], eos: int, tally: Tally | None) -> None:
    """Teacher-force `tokens` through `walker`, then ask for the end; timed into `tally`
    (None: a warm-up). Raises Refused where the engine disallows the answer."""
    clock = time.perf_counter_ns
    walker.start()
    masks: list[int] = []
    advances: list[int] = []
    allowed: list[int] = []
    for step, token in enumerate([*tokens, eos]):
        walker.prepare()
        t0 = clock()
        walker.mask()
        masks.append(clock() - t0)
        allowed.append(walker.allowed_count())
        if not walker.allows(token):
            what = "end-of-text" if step == len(tokens) else f"token {step} ({token})"
            raise Refused(f"{what} not allowed")
        if step == len(tokens):
            break
        t0 = clock()
        walker.advance(token)
        advances.append(clock() - t0)
    if tally is not None:
        tally.mask_ns.extend(masks)
        tally.advance_ns.extend(advances)
        tally.allowed.extend(allowed)
        tally.walked += 1


def timed_ms(call: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    t0 = time.perf_counter_ns()
    result = call(*args)
    return result, (time.perf_counter_ns() - t0) / 1e6


def make_engines(names: list[str], vocab: Vocab, threads: int) -> list[Engine]:
    engines: list[Engine] = []
    for name in names:
        if name == "llguidance":
            engines.append(LlguidanceEngine(vocab))
        elif name == "gbnf":
            engines.append(GbnfEngine(vocab))
        else:
            try:
                engines.append(XgrammarEngine(vocab, threads, fixed=name == "xgrammar-fixed"))
            except ImportError:
                print(XGRAMMAR_HINT)
                print(f"  ({name} skipped)")
    return engines


def measure(args: argparse.Namespace) -> None:
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = sorted(set(names) - set(ENGINES))
    if unknown:
        raise SystemExit(f"--engines: unknown {', '.join(unknown)} (known: {', '.join(ENGINES)})")
    task = get_task(args.task)
    dataset, _ = load_examples(task, RunSettings(limit=args.limit))
    examples = dataset[: args.limit] if args.limit else dataset
    model = model_under_test(None)
    vocab = Vocab.load(str(model.path))
    answers = [vocab.tokens(answer_text(ex.expected)) for ex in examples]
    engines = make_engines(names, vocab, args.threads)
    tallies = {e.name: Tally() for e in engines}
    walkers: dict[tuple[str, str], Walker | str] = {}  # (engine, schema id) -> walker or refusal
    print(
        f"{len(examples)} examples, {len({ex.schema_id for ex in examples})} schemas, "
        f"{sum(len(a) + 1 for a in answers)} steps per engine, vocabulary {vocab.n_vocab}",
        flush=True,
    )
    gc.disable()  # no collection inside a timed call
    t_start = time.time()
    for index, (example, tokens) in enumerate(zip(examples, answers, strict=True)):
        # the engines take turns, starting with a different one each example
        turn = engines[index % len(engines) :] + engines[: index % len(engines)]
        for engine in turn:
            tally, key = tallies[engine.name], (engine.name, example.schema_id)
            if key not in walkers:
                try:
                    walker, ms = timed_ms(engine.compile, example.schema)
                    tally.compile_ms.append(ms)
                    tally.again_ms.append(timed_ms(engine.again, example.schema)[1])
                    walkers[key] = walker
                    if index == 0:
                        walk(walker, tokens, vocab.eos, None)  # warm-up, untimed
                except Refused as exc:
                    walkers[key] = f"schema refused: {exc}"
            known = walkers[key]
            if isinstance(known, str):
                tally.rejected[example.id] = known
                continue
            try:
                walk(known, tokens, vocab.eos, tally)
            except Refused as exc:
                tally.rejected[example.id] = str(exc)
        gc.collect()
    gc.enable()
    wall = time.time() - t_start
    for engine in engines:
        if isinstance(engine, GbnfEngine):
            engine.close()
    print_results(engines, tallies, args, wall)


# -- results ------------------------------------------------------------------------


def summary(tally: Tally) -> dict[str, float | None]:
    """The table's figures for one engine (None where it measured nothing)."""

    def pct(values: list[float] | list[int], q: float, scale: float = 1.0) -> float | None:
        return float(np.percentile(values, q)) / scale if values else None

    return {
        "compile_p50": pct(tally.compile_ms, 50),
        "compile_max": max(tally.compile_ms) if tally.compile_ms else None,
        "again_p50": pct(tally.again_ms, 50),
        "mask_p50": pct(tally.mask_ns, 50, 1e3),
        "mask_p99": pct(tally.mask_ns, 99, 1e3),
        "mask_mean": float(np.mean(tally.mask_ns)) / 1e3 if tally.mask_ns else None,
        "advance_p50": pct(tally.advance_ns, 50, 1e3),
        "allowed_p50": pct(tally.allowed, 50),
        "allowed_mean": float(np.mean(tally.allowed)) if tally.allowed else None,
    }


def cell(value: float | None) -> str:
    """A figure with about three significant digits; '-' for none."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def table(rows: list[tuple[str, str, Tally]]) -> list[str]:
    """Markdown lines: one row per (engine, version, tally)."""
    lines = [
        "| engine | version | compile ms p50 (max) | again ms p50 | examples walked "
        "| rejected | steps | mask µs p50 | mask µs p99 | mask µs mean | advance µs p50 "
        "| allowed tokens p50 (mean) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, version, tally in rows:
        s = summary(tally)
        lines.append(
            f"| {name} | {version} | {cell(s['compile_p50'])} ({cell(s['compile_max'])}) "
            f"| {cell(s['again_p50'])} | {tally.walked} | {len(tally.rejected)} "
            f"| {len(tally.mask_ns)} | {cell(s['mask_p50'])} | {cell(s['mask_p99'])} "
            f"| {cell(s['mask_mean'])} | {cell(s['advance_p50'])} "
            f"| {cell(s['allowed_p50'])} ({cell(s['allowed_mean'])}) |"
        )
    return lines


def print_results(
    engines: list[Engine], tallies: dict[str, Tally], args: argparse.Namespace, wall: float
) -> None:
    device = device_info(args.threads)
    print()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {device.cpu_model} · "
        f"{device.logical_cores} cores · {platform.platform()} · {args.task} · "
        f"walks {wall:.0f} s · load average {' '.join(f'{x:.2f}' for x in _loadavg())}"
    )
    print()
    for line in table([(e.name, e.version, tallies[e.name]) for e in engines]):
        print(line)
    print("(steps: masks computed, one per answer token plus the end; the first example's")
    print(" walk is a warm-up, untimed; allowed tokens: how many of the vocabulary each mask")
    print(" lets through, counted outside the timing)")
    for engine in engines:
        rejected = tallies[engine.name].rejected
        if rejected:
            print(f"\n{engine.name} rejected {len(rejected)}:")
            for example_id, reason in rejected.items():
                print(f"  {example_id}: {reason[:160]}")


def _loadavg() -> tuple[float, float, float]:
    import os

    return os.getloadavg()


def _package_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="edgejson", help="edgejson or deepjson (built-in)")
    parser.add_argument("--limit", type=int, default=None, help="first N examples (default all)")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated")
    parser.add_argument("--threads", type=int, default=2, help="XGrammar's compile threads")
    measure(parser.parse_args())


if __name__ == "__main__":
    main()
