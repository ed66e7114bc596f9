"""The `outlines` constraint: Outlines 1.x on llama-cpp-python, as its users run it.

Outlines drives `Llama.create_completion` with its own logits processor (the outlines-core
index over the vocabulary), so this backend loads the model through llama-cpp-python's
high-level `Llama` class. Tokens are counted with llama.cpp's own perf counters.
"""

from __future__ import annotations

from typing import Any

from edgebench.backends.base import (
    FINISH_ERROR,
    FINISH_LENGTH,
    FINISH_STOP,
    DecodeSettings,
    Generation,
    LoadInfo,
    now,
)
from edgebench.backends.llama_cpp import LlamaCppBackend, build_info, perf_counters
from edgebench.constraints.gbnf import unenforced_keywords
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.errors import UserError

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


class OutlinesLlamaBackend:
    name = "llama-outlines"

    def __init__(self, model_path: str, n_threads: int, n_batch: int = 512) -> None:
        self.model_path = model_path
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.outlines, self.JsonSchema = _import_outlines()
        import llama_cpp

        self.L = llama_cpp
        self.llm: Any = None
        self.model: Any = None
        self._processors: dict[str, Any] = {}
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
        # outlines-core's regex builder reads past numeric bounds as the GBNF one does.
        ignored = tuple(unenforced_keywords(request.schema)) if error is None else ()
        report = CompileReport.new(
            request, ENGINE, error=error, warnings=ignored, seconds=now() - start
        )
        self._reports[request.key] = report
        return report

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        request = settings.constraint
        processors = None
        if request is not None:
            if request.key not in self._reports:
                self.compile_constraint(request)
            if not self._reports[request.key].ok:
                raise RuntimeError(f"constraint {request.label} is unsupported")
            processor = self._processors[request.key]
            processor.reset()
            processors = self.L.LogitsProcessorList([processor])
        self.llm.reset()  # no KV prefix reuse between examples (environment.md)
        self.L.llama_perf_context_reset(self.llm.ctx)
        t_start = now()
        t_first = None
        pieces: list[str] = []
        finish = FINISH_LENGTH
        error = None
        try:
            stream = self.llm.create_completion(
                prompt,
                max_tokens=settings.max_tokens,
                temperature=0.0,
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


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None
