"""The `outlines` constraint: Outlines 1.x on llama-cpp-python, as its users run it.

Outlines drives `Llama.create_completion` with its own logits processor (the outlines-core
index over the vocabulary), so this backend loads the model through llama-cpp-python's
high-level `Llama` class. Tokens are counted with llama.cpp's own perf counters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from edgebench.backends.answer_end import AnswerWatch
from edgebench.backends.base import DecodeSettings, Generation, LoadInfo, now
from edgebench.backends.llama_cpp import LlamaCppBackend, build_info, perf_counters
from edgebench.constraints.guard import GUARDED_KEYWORDS, KeywordGuard, TokenGuard
from edgebench.constraints.ignored import outlines_ignored
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.errors import UserError
from edgebench.runfolder.records import FINISH_ERROR, FINISH_LENGTH, FINISH_STOP

# The same whitespace llama-cpp-python's GBNF converter allows between JSON tokens
# (`space ::= " "?`); Outlines' default, [\n\t ]*, lets a small model pad forever.
WHITESPACE = r"[ ]?"
ENGINE = "outlines_core"


def _import_outlines() -> Any:
    try:
        import outlines
        from outlines.types import JsonSchema
    except ImportError:
        raise UserError(
            "the outlines constraint needs Outlines: pip install 'edgebench[outlines]'"
        ) from None
    return outlines, JsonSchema


class GuardProcessor:
    """A logits processor that runs after Outlines' own: among the tokens Outlines allows
    (the others are -inf), it strikes out those the keyword guard refuses, so greedy
    sampling takes the best token both allow."""

    def __init__(self, guard: TokenGuard, piece: Callable[[int], bytes], is_end: Any) -> None:
        self.guard = guard
        self.piece = piece
        self.is_end = is_end

    def reset(self) -> None:
        self.guard.reset()

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        # The token picked here is committed to the guard and made the only one left,
        # so sampling takes exactly it and the guard has seen every token so far.
        token = self.guard.pick(scores, None, self.piece, self.is_end)
        scores[:] = -np.inf
        scores[token] = 0.0
        return scores


class OutlinesLlamaBackend:
    name = "llama-outlines"

    def __init__(
        self, model_path: str, n_threads: int, n_batch: int = 512, guard: bool = True
    ) -> None:
        self.model_path = model_path
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.use_guard = guard
        self.outlines, self.JsonSchema = _import_outlines()
        import llama_cpp

        self.L = llama_cpp
        self.llm: Any = None
        self.model: Any = None
        self._processors: dict[str, Any] = {}
        self._guards: dict[str, GuardProcessor] = {}
        self._reports: dict[str, CompileReport] = {}
        self._counter: LlamaCppBackend | None = None

    def count_tokens(self, prompts: list[str]) -> list[int]:
        # Same tokenizer rules as the llama backend, from the vocabulary alone.
        if self._counter is None:
            self._counter = LlamaCppBackend(self.model_path, self.n_threads)
        return self._counter.count_tokens(prompts)

    def load(self, n_ctx: int) -> LoadInfo:
        if self._counter is not None:
            self._counter.close()
            self._counter = None
        try:
            self.llm = self.L.Llama(
                model_path=self.model_path,
                n_ctx=n_ctx,
                n_batch=min(self.n_batch, n_ctx),
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_gpu_layers=0,
                verbose=False,
            )
        except ValueError as exc:
            raise UserError(f"llama-cpp-python could not load {self.model_path}: {exc}") from None
        self.model = self.outlines.from_llamacpp(self.llm, chat_mode=False)
        return LoadInfo(
            n_ctx=self.llm.n_ctx(),
            runtime={
                "name": "llama.cpp + Outlines",
                "llama_cpp_python": self.L.__version__,
                "outlines": _version("outlines"),
                "outlines_core": _version("outlines_core"),
                "engine": ENGINE,
                "whitespace_pattern": WHITESPACE,
                "keyword_guard": self.use_guard,
                "build": build_info(self.L),
                "n_threads": self.n_threads,
                "constraint_mode": "outlines",
            },
        )

    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        if request.mode != "outlines":
            raise ValueError(f"this worker decodes under 'outlines', not '{request.mode}'")
        start = now()
        known = self._reports.get(request.key)
        if known is not None:
            return known.as_cached(now() - start)
        error = None
        try:
            output_type = self.JsonSchema(request.schema, whitespace_pattern=WHITESPACE)
            generator = self.outlines.Generator(self.model, output_type, backend=ENGINE)
            self._processors[request.key] = generator.logits_processor
        except Exception as exc:  # outlines-core refuses what it cannot express
            error = f"outlines: {type(exc).__name__}: {exc}".splitlines()[0]
        guarded: tuple[str, ...] = ()
        if error is None and self.use_guard and request.schema is not None:
            guard = KeywordGuard(request.schema)
            if guard.active:
                self._guards[request.key] = GuardProcessor(
                    TokenGuard(guard), self._piece, self._is_end
                )
                guarded = guard.keywords
        # outlines-core's regex builder reads past numeric bounds as the GBNF one does.
        enforced = GUARDED_KEYWORDS if guarded else frozenset()
        ignored = tuple(outlines_ignored(request.schema, enforced)) if not error else ()
        report = CompileReport.new(
            request, ENGINE, error=error, warnings=ignored, guarded=guarded, seconds=now() - start
        )
        self._reports[request.key] = report
        return report

    def _piece(self, token: int) -> bytes:
        return bytes(self.llm.detokenize([token]))

    def _is_end(self, token: int) -> bool:
        return bool(self.L.llama_vocab_is_eog(self.L.llama_model_get_vocab(self.llm.model), token))

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        request = settings.constraint
        processors = None
        guard = None
        if request is not None:
            if request.key not in self._reports:
                self.compile_constraint(request)
            if not self._reports[request.key].ok:
                raise RuntimeError(f"constraint {request.label} is unsupported")
            processor = self._processors[request.key]
            processor.reset()
            chain = [processor]
            guard = self._guards.get(request.key)
            if guard is not None:
                guard.reset()
                chain.append(guard)
            processors = self.L.LogitsProcessorList(chain)
        self.llm.reset()  # no KV prefix reuse: it changed greedy outputs between examples
        self.L.llama_perf_context_reset(self.llm.ctx)
        t_start = now()
        t_first = None
        pieces: list[str] = []
        finish = FINISH_LENGTH
        error = None
        # Stream chunks are (about) tokens: the loop rule compares them by their text.
        watch = AnswerWatch(settings.end)
        try:
            stream = self.llm.create_completion(
                prompt,
                max_tokens=settings.max_tokens,
                **_sampling_options(settings),
                repeat_penalty=1.0,
                stop=list(settings.stop) or None,
                logits_processor=processors,
                stream=True,
            )
            for chunk in stream:
                if t_first is None:
                    t_first = now()
                choice = chunk["choices"][0]
                pieces.append(choice["text"])
                if choice.get("finish_reason") == "stop":
                    finish = FINISH_STOP
                piece = choice["text"].encode("utf-8")
                ended = watch.push(hash(piece), piece)
                if ended is not None:
                    finish = ended
                    break
        except Exception as exc:  # report, keep the run going
            finish, error = FINISH_ERROR, f"{type(exc).__name__}: {exc}"
        t_end = now()
        perf = self.L.llama_perf_context(self.llm.ctx)
        # llama-cpp-python evaluates every sampled token but the last one.
        generated = int(perf.n_eval) + 1 if t_first is not None else 0
        output = generated - 1 if finish == FINISH_STOP and generated else generated
        return Generation(
            text="".join(pieces),
            prompt_tokens=int(perf.n_p_eval),
            output_tokens=output,
            generated_tokens=generated,
            finish_reason=finish,
            t_start=t_start,
            t_first_token=t_first,
            t_end=t_end,
            error=error,
            forward_passes=int(perf.n_eval),
            runtime_counters=perf_counters(perf),
            guard_vetoes=guard.guard.guard.vetoes if guard is not None else 0,
            guard_dead_ends=guard.guard.guard.dead_ends if guard is not None else 0,
            answer_tokens=watch.answer_tokens,
        )

    def close(self) -> None:
        if self._counter is not None:
            self._counter.close()
        if self.llm is not None:
            # Drop llama-cpp-python's sampler (it wraps Outlines' processor) while the
            # context it points into still exists; freed later it reads garbage.
            self.llm._sampler = None
            self.llm.close()
            self.llm = None


def _sampling_options(settings: DecodeSettings) -> dict[str, Any]:
    """Greedy, or plain temperature sampling seeded by `settings.seed`: llama-cpp-python's
    default top-k 40, top-p 0.95 and min-p 0.05 cuts are switched off, as in the llama
    backend's temp + dist chain."""
    if not settings.sampling:
        return {"temperature": 0.0}
    return {
        "temperature": settings.temperature,
        "seed": settings.seed,
        "top_k": 0,
        "top_p": 1.0,
        "min_p": 0.0,
        "typical_p": 1.0,
    }


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None
