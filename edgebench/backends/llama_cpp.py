"""llama.cpp through llama-cpp-python's low-level API.

edgebench runs its own greedy decode loop instead of `Llama.create_completion`: the loop
timestamps the first and last sampled token itself, clears the KV cache before every
request (reusing a cached prefix was seen to change greedy outputs), and adds
almost nothing per token, so the tokens/s it reports are llama.cpp's.

Sampling (temperature > 0, for `edgebench consistency`): the chain becomes [grammar] +
temp + dist(seed), llama.cpp's own samplers, built for the request and freed after it;
where edgebench picks tokens itself (`mask`, and the keyword guard in `gbnf`) it draws
from the softmax of the allowed tokens with numpy's PCG64 seeded by the same seed
(`decoding.softmax_draw`). Greedy decoding (the default) is unchanged.

Constraints: `json` and `gbnf` put llama.cpp's grammar sampler in front of the greedy
sampler; `mask` asks llguidance for the legal tokens, picks the best legal logit itself
and appends tokens the grammar forces without sampling them (fast-forward).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import DecodeSettings, Generation, LoadInfo, now
from edgebench.backends.decoding import (
    Closing,
    CompiledConstraints,
    DecodeState,
    Draw,
    MaskedGreedy,
    closing_for,
    require_fit,
    schema_guard,
    softmax_draw,
)
from edgebench.backends.speed import ProbeVocab
from edgebench.backends.step_clock import DECODE, GUARD, MASK, SAMPLE, clock
from edgebench.constraints import gbnf
from edgebench.constraints.gbnf_depth import nesting_refusal
from edgebench.constraints.guard import GUARDED_KEYWORDS, TokenGuard
from edgebench.constraints.ignored import gbnf_ignored
from edgebench.constraints.llguidance_mask import TokenMask, compile_schema, import_llguidance
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.errors import UserError
from edgebench.runfolder.records import FINISH_ERROR, FINISH_STOP
from edgebench.system.build_flags import read_stamp

_LOG_ERROR = 3
_MAX_BATCH = 512
_SUPPORTED = ("none", "json", "gbnf", "mask")


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise UserError(
            "llama-cpp-python is not installed: run ./install.sh (or pip install "
            "'edgebench[llama]' with portable CMAKE_ARGS, see docs/start/install.md)"
        ) from None
    return llama_cpp


class _LlamaLog:
    """Keeps llama.cpp's log quiet but remembers recent errors for our messages."""

    def __init__(self, llama_cpp: Any) -> None:
        self.errors: deque[str] = deque(maxlen=20)
        self.count = 0  # errors logged so far (the deque keeps only the last 20)

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
            if level == _LOG_ERROR:
                message = text.decode("utf-8", "replace").strip()
                if message:
                    self.errors.append(message)
                    self.count += 1

        self._callback = callback  # keep a reference: C holds only a pointer
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))

    def mark(self) -> int:
        return self.count

    def last_error(self) -> str:
        return self.errors[-1] if self.errors else "no message from llama.cpp"

    def first_line_since(self, mark: int) -> str | None:
        """The first line of the first error logged after `mark` (grammar errors come
        with the whole grammar appended)."""
        new = min(self.count - mark, len(self.errors))
        return self.errors[-new].splitlines()[0] if new > 0 else None


_LOG: _LlamaLog | None = None


def _process_log(llama_cpp: Any) -> _LlamaLog:
    """One log callback per process, alive until the process ends: llama.cpp keeps a
    raw pointer to it, and a callback freed with its backend would be called later."""
    global _LOG
    if _LOG is None:
        _LOG = _LlamaLog(llama_cpp)
    return _LOG


@dataclass
class _Compiled:
    """A constraint ready to decode with: a sampler chain (grammar modes) or a matcher,
    and the keyword guard when the schema has something for it to enforce."""

    report: CompileReport
    chain: Any = None
    matcher: Any = None
    guard: TokenGuard | None = None
    grammar: str | None = None  # GBNF text, to build a sampling chain around it


class LlamaCppBackend:
    name = "llama"

    def __init__(
        self,
        model_path: str,
        n_threads: int,
        n_batch: int = _MAX_BATCH,
        constraint_mode: str = "none",
        fast_forward: bool = True,
        guard: bool = True,
    ) -> None:
        if constraint_mode not in _SUPPORTED:
            raise UserError(f"the llama backend has no '{constraint_mode}' constraint mode")
        self.model_path = model_path
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.constraint_mode = constraint_mode
        self.fast_forward = fast_forward
        self.use_guard = guard
        self.L = _import_llama_cpp()
        self.L.llama_backend_init()
        self.log = _process_log(self.L)
        self.model: Any = None
        self.ctx: Any = None
        self.vocab: Any = None
        self.sampler: Any = None
        self.llg: Any = None  # llguidance module and tokenizer, for the mask mode
        self.llg_tokenizer: Any = None
        self.token_mask: TokenMask | None = None
        self._candidates: CandidateArray | None = None
        self._compiled = CompiledConstraints(constraint_mode, self._compile)
        self._kv_prefix: _KvPrefix | None = None  # what the KV cache holds (--prefix-cache)
        self._prefix_tokens: dict[str, list[int]] = {}

    # -- loading -------------------------------------------------------------------
    def _load_model(self, vocab_only: bool) -> None:
        self._free()
        params = self.L.llama_model_default_params()
        params.vocab_only = vocab_only
        params.n_gpu_layers = 0
        model = self.L.llama_model_load_from_file(self.model_path.encode(), params)
        if not model:
            raise UserError(f"llama.cpp could not load {self.model_path}: {self.log.last_error()}")
        self.model = model
        self.vocab = self.L.llama_model_get_vocab(model)

    def load_vocab(self) -> None:
        """The vocabulary alone (no weights), unless the model is loaded already."""
        if self.model is None:
            self._load_model(vocab_only=True)

    def count_tokens(self, prompts: list[str]) -> list[int]:
        self.load_vocab()
        return [len(self._tokenize(p)) for p in prompts]

    def load(self, n_ctx: int) -> LoadInfo:
        self._load_model(vocab_only=False)
        L = self.L
        n_ctx_train = L.llama_model_n_ctx_train(self.model)
        if n_ctx > n_ctx_train:
            raise UserError(f"n_ctx {n_ctx} exceeds the model's training context {n_ctx_train}")
        cparams = L.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = min(self.n_batch, n_ctx)
        cparams.n_ubatch = cparams.n_batch
        cparams.n_seq_max = 1
        cparams.n_threads = self.n_threads
        cparams.n_threads_batch = self.n_threads
        cparams.no_perf = False
        ctx = L.llama_init_from_model(self.model, cparams)
        if not ctx:
            raise UserError(f"llama.cpp could not create a context: {self.log.last_error()}")
        self.ctx = ctx
        self.sampler = self._greedy_chain()
        build = build_info(L)
        runtime: dict[str, Any] = {
            "name": "llama.cpp",
            "llama_cpp_python": build["llama_cpp_python"],
            "system_info": build["system_info"],
            "build": build,
            "n_ctx_train": n_ctx_train,
            # The weights' bytes as llama.cpp (and llama-bench's size column) count them.
            "model_size_bytes": int(L.llama_model_size(self.model)),
            "n_batch": cparams.n_batch,
            "n_threads": self.n_threads,
            "constraint_mode": self.constraint_mode,
            "keyword_guard": self.use_guard and self.constraint_mode in ("gbnf", "mask"),
        }
        if self.constraint_mode == "mask":
            runtime.update(self._load_llguidance())
        return LoadInfo(n_ctx=L.llama_n_ctx(ctx), runtime=runtime)

    def _load_llguidance(self) -> dict[str, Any]:
        """The llguidance tokenizer reads the whole vocabulary once (~1 s); a deployment
        pays it at start-up, so it is part of loading, reported on its own."""
        self.llg = import_llguidance()
        start = now()
        with warnings.catch_warnings():
            # llguidance's bridge calls llama_token_get_attr once per vocabulary entry,
            # which llama-cpp-python marks deprecated.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.llg_tokenizer = self.llg.llamacpp.lltokenizer_from_vocab(self.vocab)
        self.token_mask = TokenMask(self.L.llama_vocab_n_tokens(self.vocab))
        return {
            "llguidance": self.llg.__version__ if hasattr(self.llg, "__version__") else None,
            "grammar_tokenizer_s": now() - start,
            "fast_forward": self.fast_forward,
        }

    def _greedy_chain(self, grammar: Any = None) -> Any:
        L = self.L
        chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        if grammar is not None:
            L.llama_sampler_chain_add(chain, grammar)  # the chain owns it from here
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_greedy())
        return chain

    # -- constraints ---------------------------------------------------------------
    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        return self._compiled.compile(request)

    def _compile(self, request: ConstraintRequest) -> _Compiled:
        def failed(source: str, error: str) -> _Compiled:
            return _Compiled(CompileReport.new(request, source, error=error))

        guard, guarded = schema_guard(request.schema, self.use_guard)
        enforced = GUARDED_KEYWORDS if guard is not None else frozenset()
        if request.mode == "mask":
            assert request.schema is not None
            try:
                matcher, ignored = compile_schema(
                    self.llg, self.llg_tokenizer, request.schema, enforced_elsewhere=enforced
                )
            except ValueError as exc:
                return failed("llguidance", str(exc))
            report = CompileReport.new(request, "llguidance", warnings=ignored, guarded=guarded)
            return _Compiled(report, matcher=matcher, guard=guard)
        warnings: tuple[str, ...] = ()
        if request.mode == "json":
            text, source = gbnf.json_grammar(), "grammars/json.gbnf"
        else:
            assert request.schema is not None
            too_deep = nesting_refusal(request.schema)
            if too_deep is not None:  # refused before it can crash llama.cpp's parser
                return failed("edgebench", too_deep)
            try:
                found = gbnf.schema_grammar(request.schema, request.key)
            except Exception as exc:  # the converter raises on schemas it cannot express
                return failed("converter", f"json_schema_to_gbnf: {exc}")
            text, source = found.text, found.source
            warnings = tuple(gbnf_ignored(request.schema, gbnf.converter_formats(), enforced))
        # llama.cpp returns NULL for a grammar it cannot parse; llama-cpp-python's
        # LlamaGrammar would have carried on and crashed at the first token.
        mark = self.log.mark()
        # The grammar parser writes its reason straight to stderr, not to the log.
        with _captured_stderr() as captured:
            grammar = self.L.llama_sampler_init_grammar(self.vocab, text.encode("utf-8"), b"root")
        if not grammar:
            reason = _first_error_line(captured.text) or self.log.first_line_since(mark)
            return failed(source, f"llama.cpp: {reason or 'could not parse the grammar'}")
        report = CompileReport.new(request, source, warnings=warnings, guarded=guarded)
        return _Compiled(report, chain=self._greedy_chain(grammar), guard=guard, grammar=text)

    # -- tokens --------------------------------------------------------------------
    def _tokenize(self, text: str, special: bool = True) -> list[int]:
        """`text` as the model reads it; `special`: a prompt (BOS added, special tokens
        of the chat template parsed), else plain text (an answer that follows one)."""
        data = text.encode("utf-8")
        capacity = len(data) + 8
        for _ in range(2):
            buf = (self.L.llama_token * capacity)()
            n = self.L.llama_tokenize(self.vocab, data, len(data), buf, capacity, special, special)
            if n >= 0:
                tokens = list(buf[:n])
                # A chat template that writes BOS itself plus add_bos would give two.
                bos = self.L.llama_vocab_bos(self.vocab)
                if len(tokens) > 1 and tokens[0] == tokens[1] == bos:
                    del tokens[0]
                return tokens
            capacity = -n
        raise RuntimeError("llama_tokenize failed")

    def _piece(self, token: int, buf: ctypes.Array[ctypes.c_char]) -> bytes:
        n = self.L.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:
            bigger = ctypes.create_string_buffer(-n)
            n = self.L.llama_token_to_piece(self.vocab, token, bigger, -n, 0, False)
            return bigger.raw[:n]
        return buf.raw[:n]

    # -- decoding ------------------------------------------------------------------
    def _decode(self, tokens: list[int]) -> None:
        """Evaluate `tokens` (prompt or generated) in batches of at most n_batch."""
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
                raise RuntimeError(f"llama_decode returned {rc}: {self.log.last_error()}")

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        L = self.L
        t_start = now()
        tokens = self._tokenize(prompt)
        require_fit(len(tokens), settings, L.llama_n_ctx(self.ctx))
        request = settings.constraint
        compiled = self._compiled.usable(request) if request is not None else None
        L.llama_perf_context_reset(self.ctx)
        state = DecodeState.under(settings.end)
        guard = compiled.guard if compiled is not None else None
        draw = softmax_draw(settings.temperature, settings.seed) if settings.sampling else None
        tokens_in, cached = tokens, 0
        try:
            # A fresh KV cache for every request, or one that keeps its shared prefix.
            tokens, cached = self._prefill_plan(tokens_in, settings.prefix)
            if compiled is not None and compiled.matcher is not None:
                closing = closing_for(settings, self.llg_tokenizer.tokenize_str)
                self._masked(compiled.matcher, guard, draw, closing).run(
                    tokens, self._decode, self._last_logits, settings.max_tokens, state
                )
            elif settings.sampling and guard is None:
                chain = self._sampling_chain(compiled, settings)
                try:
                    self._decode(tokens)
                    self._sampler_loop(chain, settings, state)
                finally:
                    L.llama_sampler_free(chain)
            else:
                chain = compiled.chain if compiled is not None else self.sampler
                L.llama_sampler_reset(chain)
                self._decode(tokens)
                if guard is not None:
                    guard.reset()
                    self._guarded_sampler_loop(chain, guard, settings, state, draw)
                else:
                    self._sampler_loop(chain, settings, state)
        except RuntimeError as exc:
            state.finish, state.error = FINISH_ERROR, str(exc)
        t_end = now()
        perf = L.llama_perf_context(self.ctx)
        gen = state.generation(len(tokens_in), t_start, t_end, perf_counters(perf), guard)
        gen.cached_prompt_tokens = cached
        return gen

    # -- the prefix cache (--prefix-cache) ----------------------------------------------
    def _prefill_plan(self, tokens: list[int], prefix: str | None) -> tuple[list[int], int]:
        """Prepare the KV cache for `tokens`: cleared, or (with the prompt's shared
        `prefix`) holding that prefix from an earlier request. Returns the tokens still to
        evaluate and how many were reused.

        The prefix is always evaluated alone, in the same batches, so its KV values do not
        depend on which example built it: outputs do not depend on the order of examples.
        At least MIN_TAIL tokens are evaluated after it, because llama.cpp computes
        smaller batches through another kernel path whose logits differ slightly."""
        L = self.L
        memory = L.llama_get_memory(self.ctx)
        shared = self._shared_prefix(tokens, prefix) if prefix is not None else []
        reuse = min(len(shared), len(tokens) - MIN_TAIL)
        if reuse < MIN_TAIL:
            L.llama_memory_clear(memory, True)
            self._kv_prefix = None
            return tokens, 0
        known = self._kv_prefix
        hit = known is not None and known.tokens == shared and known.valid >= reuse
        if not hit:
            self._kv_prefix = None
            L.llama_memory_clear(memory, True)
            self._decode(shared)
        if not L.llama_memory_seq_rm(memory, 0, reuse, -1):
            raise RuntimeError("llama.cpp could not trim the cached prefix")
        self._kv_prefix = _KvPrefix(shared, reuse)
        return tokens[reuse:], reuse if hit else 0

    def _shared_prefix(self, tokens: list[int], prefix: str) -> list[int]:
        """The tokens `tokens` shares with the tokenized prefix text (BPE may merge across
        the boundary, so the common run, not the prefix's own tokens)."""
        own = self._prefix_tokens.get(prefix)
        if own is None:
            own = self._prefix_tokens[prefix] = self._tokenize(prefix)
        common = 0
        for a, b in zip(own, tokens, strict=False):
            if a != b:
                break
            common += 1
        return own[:common]

    def _sampling_chain(self, compiled: _Compiled | None, settings: DecodeSettings) -> Any:
        """[grammar] + temp + dist(seed) for one request; the caller frees it."""
        L = self.L
        chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        if compiled is not None and compiled.grammar is not None:
            grammar = L.llama_sampler_init_grammar(
                self.vocab, compiled.grammar.encode("utf-8"), b"root"
            )
            if not grammar:  # it parsed when compiled; only a broken build gets here
                L.llama_sampler_free(chain)
                raise RuntimeError("llama.cpp could not rebuild the grammar for sampling")
            L.llama_sampler_chain_add(chain, grammar)
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_temp(settings.temperature))
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_dist(settings.seed))
        return chain

    def _sampler_loop(self, chain: Any, settings: DecodeSettings, state: DecodeState) -> None:
        """Decoding through a llama.cpp sampler chain: greedy or temp + dist, with or
        without a grammar."""
        L = self.L
        piece_buf = ctypes.create_string_buffer(64)
        stops = [s.encode("utf-8") for s in settings.stop]
        longest_stop = max((len(s) for s in stops), default=0)
        out, steps = state.out, state.steps
        while True:
            start = clock()
            token = L.llama_sampler_sample(chain, self.ctx, -1)
            steps.add(SAMPLE, start)
            state.sampled()
            if L.llama_vocab_is_eog(self.vocab, token):
                state.finish = FINISH_STOP
                return
            checked_upto = max(0, len(out) - longest_stop + 1)
            ended = state.emit(token, self._piece(token, piece_buf))
            if stops and _cut_at_stop(out, stops, checked_upto):
                state.finish = FINISH_STOP
                return
            if ended or state.output_tokens >= settings.max_tokens:
                return
            start = clock()
            self._decode([token])
            steps.add(DECODE, start)
            state.passes += 1

    def _guarded_sampler_loop(
        self,
        chain: Any,
        guard: TokenGuard,
        settings: DecodeSettings,
        state: DecodeState,
        draw: Draw | None = None,
    ) -> None:
        """Greedy decoding through a grammar chain with the keyword guard: llama.cpp's
        grammar sampler marks the tokens it refuses, the guard strikes out those that
        would break a bound or repeat an item, and the best remaining token is accepted
        back into the grammar. Same choices as `_sampler_loop` when the guard refuses
        nothing."""
        L = self.L
        grammar = L.llama_sampler_chain_get(chain, 0)
        candidates = self._candidate_buffer()
        piece_buf = ctypes.create_string_buffer(64)
        is_end, steps = self._is_end, state.steps
        while True:
            start = clock()
            scores = candidates.refill(self._last_logits())
            L.llama_sampler_apply(grammar, candidates.pointer)  # llama.cpp's grammar mask
            steps.add(MASK, start)
            start = clock()
            token = guard.pick(scores, None, lambda t: self._piece(t, piece_buf), is_end, draw)
            steps.add(GUARD, start)
            L.llama_sampler_accept(chain, token)
            state.sampled()
            if is_end(token):
                state.finish = FINISH_STOP
                return
            ended = state.emit(token, self._piece(token, piece_buf))
            if ended or state.output_tokens >= settings.max_tokens:
                return
            start = clock()
            self._decode([token])
            steps.add(DECODE, start)
            state.passes += 1

    def _masked(
        self,
        matcher: Any,
        guard: TokenGuard | None,
        draw: Draw | None,
        closing: Closing | None = None,
    ) -> MaskedGreedy:
        assert self.token_mask is not None
        piece_buf = ctypes.create_string_buffer(64)
        return MaskedGreedy(
            matcher=matcher,
            mask=self.token_mask,
            piece=lambda token: self._piece(token, piece_buf),
            is_end=self._is_end,
            eos=self.L.llama_vocab_eos(self.vocab),
            guard=guard,
            fast_forward=self.fast_forward,
            draw=draw,
            closing=closing,
        )

    def _is_end(self, token: int) -> bool:
        return bool(self.L.llama_vocab_is_eog(self.vocab, token))

    def _last_logits(self) -> np.ndarray:
        n_vocab = self.L.llama_vocab_n_tokens(self.vocab)
        return np.ctypeslib.as_array(self.L.llama_get_logits_ith(self.ctx, -1), shape=(n_vocab,))

    def _candidate_buffer(self) -> CandidateArray:
        if self._candidates is None:
            self._candidates = CandidateArray(self.L, self.L.llama_vocab_n_tokens(self.vocab))
        return self._candidates

    # -- speed probe (edgebench bench) ------------------------------------------------
    def probe_vocab(self) -> ProbeVocab:
        L = self.L
        bos = L.llama_vocab_bos(self.vocab) if L.llama_vocab_get_add_bos(self.vocab) else None
        return ProbeVocab(size=L.llama_vocab_n_tokens(self.vocab), bos=bos)

    def probe_clear(self) -> None:
        self.L.llama_memory_clear(self.L.llama_get_memory(self.ctx), True)
        self._kv_prefix = None

    def probe_eval(self, tokens: Sequence[int]) -> None:
        self._decode(list(tokens))
        self.L.llama_synchronize(self.ctx)

    def _free(self) -> None:
        L = self.L
        self._kv_prefix = None
        for compiled in self._compiled.entries.values():
            if compiled.chain is not None:
                L.llama_sampler_free(compiled.chain)
        self._compiled.entries.clear()
        if self.sampler is not None:
            L.llama_sampler_free(self.sampler)
            self.sampler = None
        if self.ctx is not None:
            L.llama_free(self.ctx)
            self.ctx = None
        if self.model is not None:
            L.llama_model_free(self.model)
            self.model = None

    def close(self) -> None:
        self._free()


MIN_TAIL = 64  # tokens evaluated after a cached prefix (see `_prefill_plan`)


@dataclass
class _KvPrefix:
    """A shared prompt prefix in the KV cache: its tokens, and how many of them (from
    position 0) the cache still holds."""

    tokens: list[int]
    valid: int


class CandidateArray:
    """A reusable llama_token_data_array over the whole vocabulary, backed by numpy, for
    applying a llama.cpp sampler (the grammar) to logits from Python (also used by
    benchmarks/mask_engines.py)."""

    def __init__(self, L: Any, n_vocab: int) -> None:
        fields = [("id", np.int32), ("logit", np.float32), ("p", np.float32)]
        self.data = np.zeros(n_vocab, dtype=fields)
        self.data["id"] = np.arange(n_vocab, dtype=np.int32)
        self.array = L.llama_token_data_array(
            data=self.data.ctypes.data_as(ctypes.POINTER(L.llama_token_data)),
            size=n_vocab,
            selected=-1,
            sorted=False,
        )
        self.pointer = ctypes.pointer(self.array)
        self.n_vocab = n_vocab

    def refill(self, logits: np.ndarray | float) -> np.ndarray:
        """Fresh logits in vocabulary order (a scalar: the same for every token); returns
        them as a float array the grammar marks with -inf (a view: `scores` and the C
        array are the same memory)."""
        self.array.size, self.array.selected, self.array.sorted = self.n_vocab, -1, False
        self.data["logit"] = logits
        return self.data["logit"]


class _Captured:
    text = ""


@contextlib.contextmanager
def _captured_stderr() -> Iterator[_Captured]:
    """Whatever native code writes to file descriptor 2 meanwhile (it is not ours to
    print: the worker's stderr is the user's terminal)."""
    captured = _Captured()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.text = sink.read().decode("utf-8", "replace")


def _first_error_line(text: str) -> str | None:
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()
    return None


def build_info(L: Any) -> dict[str, Any]:
    """Which llama.cpp this is: versions, the ggml commit it was built from, the CPU
    features it was compiled for (`llama_print_system_info`) and, when install.sh built
    it, the CMake flags and which build (native, portable, override) they were."""
    package = Path(L.__file__).parent
    stamp = read_stamp(package) or {}
    info: dict[str, Any] = {
        "name": "llama.cpp",
        "llama_cpp_python": getattr(L, "__version__", None),
        "llama_version": _c_string(L.llama_version),
        "ggml_version": None,
        "ggml_commit": None,
        "system_info": L.llama_print_system_info().decode("utf-8", "replace").strip(),
        "cmake_args": stamp.get("cmake_args"),
        "edgebench_build": stamp.get("build"),
    }
    # ggml's version functions are not bound by llama-cpp-python: ask its own library.
    lib_dir = package / "lib"
    for lib_path in sorted(lib_dir.glob("*ggml-base*"))[:1]:
        with contextlib.suppress(OSError, AttributeError):
            ggml = ctypes.CDLL(str(lib_path))
            for key in ("ggml_version", "ggml_commit"):
                function = getattr(ggml, key)
                function.restype = ctypes.c_char_p
                info[key] = _c_string(function)
    return info


def installed_build() -> dict[str, Any]:
    """`build_info` of the installed llama-cpp-python, without loading a model."""
    return build_info(_import_llama_cpp())


def _c_string(function: Any) -> str | None:
    try:
        value = function()
    except (AttributeError, OSError):
        return None
    return value.decode("utf-8", "replace") if value else None


def perf_counters(perf: Any) -> dict[str, float]:
    """llama.cpp's own counters for one request (cross-checked against our timestamps)."""
    return {
        "t_p_eval_ms": perf.t_p_eval_ms,
        "n_p_eval": perf.n_p_eval,
        "t_eval_ms": perf.t_eval_ms,
        "n_eval": perf.n_eval,
    }


def _cut_at_stop(out: bytearray, stops: list[bytes], start: int) -> bool:
    """Truncate `out` before a stop string that ends in the newly added bytes.

    `start` is where a stop string could begin that was not already checked."""
    for stop in stops:
        index = out.find(stop, start)
        if index != -1:
            del out[index:]
            return True
    return False
