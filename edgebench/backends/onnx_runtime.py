"""ONNX models (from `edgebench models convert`) on plain onnxruntime: no torch, no
transformers at run time.

The graph has the inputs of optimum's `text-generation-with-past` export (input_ids,
attention_mask, position_ids and past_key_values.N.key/value; outputs logits and
present.N.key/value): optimum's own, or edgebench's `gqa` graph (models/onnx_graph.py).
edgebench runs its own decode loop over the session with the KV cache in preallocated
buffers bound through onnxruntime's IO binding (backends/onnx_kv.py: `SharedKV`, one
buffer read and written in place, on a gqa graph; `BoundKV` on optimum's), fresh for every
request, and timestamps the first and last sampled token itself, like the llama.cpp
backend. Decoding is greedy, or with
`DecodeSettings(temperature > 0, seed)` (`edgebench consistency`) a seeded draw from the
softmax of the logits (`decoding.softmax_draw`, the same helper the llama.cpp backend
uses where it picks tokens itself; unconstrained and under the constraints alike).

Prompts are tokenized with the `tokenizers` package from the folder's tokenizer.json,
adding BOS only when the GGUF the model came from asked for it, so both runtimes read the
same token ids.

Constraints work on the logits with the llama.cpp path's engine and step: `mask` compiles
the schema with llguidance and decodes through `MaskedGreedy` (fast-forward and keyword
guard included); `json` runs the same hand-written grammars/json.gbnf, translated to
llguidance's Lark by llguidance itself, through the same step. `gbnf` (llama.cpp's own
sampler) and `outlines` are skips recorded by the runner (backends/__init__.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
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
from edgebench.backends.onnx_kv import BoundKV, KVCache, NumpyKV, SharedKV
from edgebench.backends.speed import ProbeVocab
from edgebench.constraints import gbnf
from edgebench.constraints.guard import GUARDED_KEYWORDS, TokenGuard
from edgebench.constraints.llguidance_mask import TokenMask, compile_schema
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.errors import UserError
from edgebench.models.onnx_check import check_model_file
from edgebench.models.onnx_model import TOKENIZER, read_provenance
from edgebench.runfolder.records import FINISH_ERROR, FINISH_STOP

ONNX_EXTRA_HINT = "pip install 'edgebench[onnx]'"
_SUPPORTED = ("none", "json", "mask")


def import_onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise UserError(f"the onnx backend needs onnxruntime: {ONNX_EXTRA_HINT}") from None
    return onnxruntime


def build_info(ort: Any) -> dict[str, Any]:
    """Which onnxruntime this is, for the device block (as llama.cpp's build info is)."""
    return {
        "name": "onnxruntime",
        "onnxruntime": ort.__version__,
        "build_info": ort.get_build_info().strip(),
        "device": ort.get_device(),
        "available_providers": list(ort.get_available_providers()),
    }


def load_tokenizer(folder: Path) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UserError(
            f"the onnx backend needs the tokenizers package: {ONNX_EXTRA_HINT}"
        ) from None
    path = folder / TOKENIZER
    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises its own Exception type for bad files
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"{path}: cannot read the tokenizer: {reason}") from None


def plain_byte_level(tokenizer_json: str) -> str:
    """tokenizer.json as llguidance must read it to get each token's bytes.

    transformers writes GGUF BPE tokenizers with a decoder chain (ByteFallback, Fuse,
    Replace, ByteLevel) that llguidance does not recognise as byte-level, so it would take
    "Ġ{" for the bytes of the text instead of " {" and the grammar would refuse every token
    that starts with a space. With a ByteLevel pre-tokenizer, the ByteLevel decoder alone
    decodes the same; other tokenizers are passed through unchanged."""
    data = json.loads(tokenizer_json)
    decoder = data.get("decoder") or {}
    if decoder.get("type") != "Sequence" or not _has_byte_level(data.get("pre_tokenizer")):
        return tokenizer_json
    byte_level = [d for d in decoder.get("decoders", []) if d.get("type") == "ByteLevel"]
    if not byte_level:
        return tokenizer_json
    data["decoder"] = byte_level[0]
    return json.dumps(data)


def _has_byte_level(step: dict[str, Any] | None) -> bool:
    if not step:
        return False
    if step.get("type") == "ByteLevel":
        return True
    return any(_has_byte_level(s) for s in step.get("pretokenizers", []))


@dataclass
class _CompiledMatcher:
    """A constraint ready to decode with: an llguidance matcher and the keyword guard."""

    report: CompileReport
    matcher: Any = None
    guard: TokenGuard | None = None


class _Timer:
    """Runs a request's forward passes and times them: the first is the prefill."""

    def __init__(self, kv: KVCache) -> None:
        self.kv = kv
        self.logits: np.ndarray | None = None
        self.prefill_ms = 0.0
        self.decode_ms = 0.0

    def evaluate(self, tokens: list[int]) -> None:
        start = now()
        first = self.logits is None
        self.logits = self.kv.forward(tokens)
        elapsed = (now() - start) * 1000
        if first:
            self.prefill_ms += elapsed
        else:
            self.decode_ms += elapsed

    def last_logits(self) -> np.ndarray:
        assert self.logits is not None
        return self.logits


class OnnxBackend:
    name = "onnx"

    def __init__(
        self,
        model_path: str,
        n_threads: int,
        constraint_mode: str = "none",
        guard: bool = True,
        fast_forward: bool = True,
    ) -> None:
        if constraint_mode not in _SUPPORTED:
            raise UserError(f"the onnx backend has no '{constraint_mode}' constraint mode")
        self.use_guard = guard
        self.fast_forward = fast_forward
        self.llg: Any = None
        self.llg_tokenizer: Any = None
        self.token_mask: TokenMask | None = None
        self._compiled = CompiledConstraints(constraint_mode, self._compile)
        self.folder = Path(model_path)
        self.model = read_provenance(self.folder)
        self.n_threads = n_threads
        self.constraint_mode = constraint_mode
        tokens = self.model.tokens
        self.add_bos = bool(tokens.get("add_bos"))
        self.bos_id = tokens.get("bos_id")
        self.eog_ids = frozenset(int(t) for t in tokens.get("eog_ids") or [])
        self.tokenizer: Any = None
        self.session: Any = None
        self.layers = 0
        self.kv_shape = (0, 0)
        self.kv_dtype: Any = np.float32
        self.n_ctx = 0
        self.vocab = 0  # the logits' width
        # The KV cache each request gets: IO-bound buffers once loaded (NumpyKV, the old
        # loop, is what benchmarks/onnx_decode.py compares against).
        self.kv_cache: Callable[[], KVCache] = self._numpy_kv
        self._probe_kv: KVCache | None = None  # the speed probe's cache (edgebench bench)

    # -- tokens --------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids as llama.cpp reads the same GGUF: special tokens parsed, BOS only
        when the model asks for it (never twice)."""
        if self.tokenizer is None:
            self.tokenizer = load_tokenizer(self.folder)
        ids = list(self.tokenizer.encode(text, add_special_tokens=False).ids)
        if self.add_bos and self.bos_id is not None and (not ids or ids[0] != self.bos_id):
            ids.insert(0, self.bos_id)
        return ids

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return [len(self.encode(p)) for p in prompts]

    # -- loading -------------------------------------------------------------------
    def load(self, n_ctx: int) -> LoadInfo:
        ort = import_onnxruntime()
        graph = self.model.graph
        # Before onnxruntime reads a byte: well-formed, external data inside the folder.
        check_model_file(graph, self.folder)
        context = self.model.provenance.get("context_length")
        if context and n_ctx > context:
            raise UserError(f"n_ctx {n_ctx} exceeds the model's training context {context}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.n_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only; they come back as exceptions
        try:
            self.session = ort.InferenceSession(
                str(graph), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own types (InvalidProtobuf, Fail)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserError(f"onnxruntime could not load {graph}: {reason}") from None
        self._read_signature()
        self.kv_cache = self.default_kv()
        if self.tokenizer is None:
            self.tokenizer = load_tokenizer(self.folder)
        self.n_ctx = n_ctx
        return LoadInfo(
            n_ctx=n_ctx,
            runtime={
                "name": "onnxruntime",
                "onnxruntime": ort.__version__,
                "providers": self.session.get_providers(),
                "intra_op_num_threads": self.n_threads,
                "inter_op_num_threads": 1,
                "graph_optimization": "ORT_ENABLE_ALL",
                "graph": self.model.graph_kind,
                "kv_loop": type(self.new_session()).__name__,
                "n_layers": self.layers,
                "kv_heads": self.kv_shape[0],
                "head_dim": self.kv_shape[1],
                "precision": self.model.provenance.get("precision"),
                "constraint_mode": self.constraint_mode,
                "keyword_guard": self.use_guard and self.constraint_mode == "mask",
                "build": build_info(ort),
                **(self._load_llguidance() if self.constraint_mode != "none" else {}),
            },
        )

    def _load_llguidance(self) -> dict[str, Any]:
        """llguidance's tokenizer from the same tokenizer.json (about 1 s, part of loading,
        as in the llama.cpp backend)."""
        try:
            import llguidance
        except ImportError:
            raise UserError(
                "the json and mask constraints need llguidance: pip install 'edgebench[onnx]'"
            ) from None
        self.llg = llguidance
        start = now()
        text = (self.folder / TOKENIZER).read_text(encoding="utf-8")
        eos = self.model.tokens.get("eos_id")
        self.llg_tokenizer = llguidance.LLTokenizer(plain_byte_level(text), eos_token=eos)
        vocab = self.model.tokens.get("vocab_size") or self.tokenizer.get_vocab_size(True)
        self.token_mask = TokenMask(int(vocab))
        return {
            "llguidance": getattr(llguidance, "__version__", None),
            "grammar_tokenizer_s": now() - start,
            "fast_forward": self.fast_forward,
        }

    def _read_signature(self) -> None:
        """Layer count and KV shape from the graph's inputs; a graph without the KV-cache
        inputs was not exported `with-past` and cannot be decoded step by step."""
        inputs = {i.name: i for i in self.session.get_inputs()}
        keys = sorted(
            (n for n in inputs if n.startswith("past_key_values.") and n.endswith(".key")),
            key=lambda n: int(n.split(".")[1]),
        )
        missing = {"input_ids", "attention_mask", "position_ids"} - set(inputs)
        if missing or not keys:
            raise UserError(
                f"{self.model.graph}: not a text-generation-with-past export "
                f"(missing inputs: {', '.join(sorted(missing)) or 'past_key_values.*'})"
            )
        first = inputs[keys[0]]
        heads, head_dim = first.shape[1], first.shape[3]
        if not isinstance(heads, int) or not isinstance(head_dim, int):
            raise UserError(f"{self.model.graph}: KV cache inputs have no fixed head shape")
        # The logits' width, for the decode step's preallocated buffer: onnxruntime's
        # shape inference fixes it for an optimum export; else the provenance's vocabulary.
        logits = {o.name: o for o in self.session.get_outputs()}.get("logits")
        vocab = logits.shape[-1] if logits is not None else None
        if not isinstance(vocab, int):
            vocab = self.model.tokens.get("vocab_size")
        if logits is None or not isinstance(vocab, int):
            raise UserError(f"{self.model.graph}: no logits output of a known vocabulary size")
        self.vocab = vocab
        self.layers = len(keys)
        self.kv_shape = (heads, head_dim)
        self.kv_dtype = np.float16 if "float16" in first.type else np.float32

    def new_session(self) -> KVCache:
        """A fresh KV cache: every request starts from nothing."""
        return self.kv_cache()

    def _numpy_kv(self) -> NumpyKV:
        return NumpyKV(self.session, self.layers, self.kv_shape, self.kv_dtype)

    def default_kv(self) -> Callable[[], KVCache]:
        """The loop a loaded session decodes with: the in-place cache on a graph whose
        attention is GroupQueryAttention, else the IO-bound one."""
        return self._shared_kv if self.model.graph_kind == "gqa" else self._bound_kv

    def _shared_kv(self) -> SharedKV:
        return SharedKV(
            self.session, self.layers, self.kv_shape, self.kv_dtype, self.vocab, self.n_ctx
        )

    def _bound_kv(self) -> BoundKV:
        return BoundKV(
            self.session, self.layers, self.kv_shape, self.kv_dtype, self.vocab, self.n_ctx
        )

    # -- constraints ---------------------------------------------------------------
    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        return self._compiled.compile(request)

    def _compile(self, request: ConstraintRequest) -> _CompiledMatcher:
        matcher_cls = self.llg.LLMatcher
        if request.mode == "json":
            # The llama.cpp path's json grammar, translated to Lark by llguidance.
            from llguidance.gbnf_to_lark import gbnf_to_lark

            grammar = matcher_cls.grammar_from_lark(gbnf_to_lark(gbnf.json_grammar()))
            matcher = matcher_cls(self.llg_tokenizer, grammar, log_level=0)
            if matcher.is_error():
                error = f"llguidance: {matcher.get_error()}"
                return _CompiledMatcher(CompileReport.new(request, "llguidance", error=error))
            return _CompiledMatcher(
                CompileReport.new(request, "grammars/json.gbnf"), matcher=matcher
            )
        assert request.schema is not None
        guard, guarded = schema_guard(request.schema, self.use_guard)
        enforced = GUARDED_KEYWORDS if guard is not None else frozenset()
        try:
            matcher, ignored = compile_schema(
                self.llg, self.llg_tokenizer, request.schema, enforced_elsewhere=enforced
            )
        except ValueError as exc:
            return _CompiledMatcher(CompileReport.new(request, "llguidance", error=str(exc)))
        report = CompileReport.new(request, "llguidance", warnings=ignored, guarded=guarded)
        return _CompiledMatcher(report, matcher=matcher, guard=guard)

    # -- decoding ------------------------------------------------------------------
    def greedy_token_ids(self, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
        """The argmax token at each of `max_new_tokens` steps, ignoring end-of-generation
        (for comparing with the model the graph was exported from)."""
        kv = self.new_session()
        logits = kv.forward(prompt_ids)
        out: list[int] = []
        while True:
            token = int(np.argmax(logits))
            out.append(token)
            if len(out) >= max_new_tokens:
                return out
            logits = kv.forward([token])

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        t_start = now()
        ids = self.encode(prompt)
        require_fit(len(ids), settings, self.n_ctx)
        compiled = self._compiled.usable(settings.constraint) if settings.constraint else None
        kv = self.new_session()
        timer = _Timer(kv)
        state = DecodeState.under(settings.end)
        draw = softmax_draw(settings.temperature, settings.seed) if settings.sampling else None
        try:
            if compiled is not None:
                closing = closing_for(settings, self.llg_tokenizer.tokenize_str)
                self._masked(compiled, draw, closing).run(
                    ids, timer.evaluate, timer.last_logits, settings.max_tokens, state
                )
            else:
                self._unconstrained(ids, timer, settings, state, draw)
        except Exception as exc:  # onnxruntime or llguidance: this example fails, not the run
            state.finish, state.error = FINISH_ERROR, f"{type(exc).__name__}: {exc}"
        t_end = now()
        counters = {
            "n_p_eval": len(ids) + state.forced_prefix,
            "t_p_eval_ms": timer.prefill_ms,
            "n_eval": state.passes,
            "t_eval_ms": timer.decode_ms,
        }
        guard = compiled.guard if compiled is not None else None
        return state.generation(len(ids), t_start, t_end, counters, guard)

    def _masked(
        self, compiled: _CompiledMatcher, draw: Draw | None = None, closing: Closing | None = None
    ) -> MaskedGreedy:
        """The shared masked step (greedy, or sampled with `draw`), on this runtime's
        logits and tokenizer."""
        assert self.token_mask is not None
        tokenizer = self.llg_tokenizer
        return MaskedGreedy(
            matcher=compiled.matcher,
            mask=self.token_mask,
            piece=lambda token: tokenizer.decode_bytes([token]),
            is_end=lambda token: token in self.eog_ids,
            eos=int(self.model.tokens["eos_id"]),
            guard=compiled.guard,
            fast_forward=self.fast_forward,
            draw=draw,
            closing=closing,
        )

    def _unconstrained(
        self,
        prompt: list[int],
        timer: _Timer,
        settings: DecodeSettings,
        state: DecodeState,
        draw: Draw | None = None,
    ) -> None:
        """Unconstrained decoding: the best token, or one drawn by `draw`. The text is
        decoded from all ids so far (a byte-level token can end inside a UTF-8
        character); stop strings cut it. The answer-ending policies see the text as it
        becomes stable (no unfinished character at its end)."""
        ids: list[int] = []
        cut: str | None = None  # the text before a stop string, once one appeared
        seen = 0  # characters of the decoded text the policies have seen
        timer.evaluate(prompt)
        try:
            while True:
                logits = timer.last_logits()
                token = int(np.argmax(logits)) if draw is None else draw(logits)
                state.sampled()
                if token in self.eog_ids:
                    state.finish = FINISH_STOP
                    return
                ids.append(token)
                state.output_tokens += 1
                text = self._decode(ids)  # once per token, for the stops and the policies
                if settings.stop:
                    cut = _cut_at_stop(text, settings.stop)
                    if cut is not None:
                        state.finish = FINISH_STOP
                        return
                ended, seen = _watch(text, token, seen, state)
                if ended or state.output_tokens >= settings.max_tokens:
                    return
                timer.evaluate([token])
                state.passes += 1
        finally:
            text = cut if cut is not None else self._decode(ids)
            state.out = bytearray(text.encode("utf-8"))

    def _decode(self, ids: list[int]) -> str:
        # Special tokens are not text, as in llama.cpp's token_to_piece(special=False).
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    # -- speed probe (edgebench bench) ------------------------------------------------
    def probe_vocab(self) -> ProbeVocab:
        size = self.model.tokens.get("vocab_size") or self.tokenizer.get_vocab_size(True)
        bos = self.bos_id if self.add_bos else None
        return ProbeVocab(size=int(size), bos=bos)

    def probe_clear(self) -> None:
        self._probe_kv = self.new_session()

    def probe_eval(self, tokens: Sequence[int]) -> None:
        # session.run returns when every output is computed, so the clock can stop.
        if self._probe_kv is None:
            self._probe_kv = self.new_session()
        self._probe_kv.forward(list(tokens))

    def close(self) -> None:
        self._probe_kv = None
        self.session = None


def _cut_at_stop(text: str, stops: tuple[str, ...]) -> str | None:
    """The text before the first stop string in it, None when there is none."""
    for stop in stops:
        index = text.find(stop)
        if index != -1:
            return text[:index]
    return None


def _watch(text: str, token: int, seen: int, state: DecodeState) -> tuple[bool, int]:
    """Show the policies the text the newest token made stable (no unfinished character
    at its end); True when one of them ends the answer. Returns the characters seen."""
    if state.watch is None:
        return False, seen
    stable = len(text) - 1 if text.endswith("\ufffd") else len(text)
    reason = state.watch.push(token, text[seen:stable].encode("utf-8"))
    if reason is not None:
        state.finish = reason
    return reason is not None, max(seen, stable)
