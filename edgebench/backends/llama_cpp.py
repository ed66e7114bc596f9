"""llama.cpp through llama-cpp-python's low-level API.

edgebench runs its own greedy decode loop instead of `Llama.create_completion`: the loop
timestamps the first and last sampled token itself, clears the KV cache before every
request (reusing a cached prefix changed greedy outputs, see environment.md), and adds
almost nothing per token, so the tokens/s it reports are llama.cpp's.
"""

from __future__ import annotations

import ctypes
from collections import deque
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
from edgebench.errors import UserError

_LOG_ERROR = 3
_MAX_BATCH = 512


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise UserError(
            "llama-cpp-python is not installed: run ./install.sh (or pip install "
            "'edgebench[llama]' with portable CMAKE_ARGS, see README)"
        ) from None
    return llama_cpp


class _LlamaLog:
    """Keeps llama.cpp's log quiet but remembers recent errors for our messages."""

    def __init__(self, llama_cpp: Any) -> None:
        self.errors: deque[str] = deque(maxlen=20)

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
            if level == _LOG_ERROR:
                self.errors.append(text.decode("utf-8", "replace").strip())

        self._callback = callback  # keep a reference: C holds only a pointer
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))

    def last_error(self) -> str:
        return self.errors[-1] if self.errors else "no message from llama.cpp"


class LlamaCppBackend:
    name = "llama"

    def __init__(self, model_path: str, n_threads: int, n_batch: int = _MAX_BATCH) -> None:
        self.model_path = model_path
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.L = _import_llama_cpp()
        self.L.llama_backend_init()
        self.log = _LlamaLog(self.L)
        self.model: Any = None
        self.ctx: Any = None
        self.vocab: Any = None
        self.sampler: Any = None
        self._vocab_only = False

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
        self._vocab_only = vocab_only

    def count_tokens(self, prompts: list[str]) -> list[int]:
        if self.model is None:
            self._load_model(vocab_only=True)
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
        self.sampler = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
        L.llama_sampler_chain_add(self.sampler, L.llama_sampler_init_greedy())
        return LoadInfo(
            n_ctx=L.llama_n_ctx(ctx),
            runtime={
                "name": "llama.cpp",
                "llama_cpp_python": getattr(L, "__version__", None),
                "system_info": L.llama_print_system_info().decode("utf-8", "replace").strip(),
                "n_ctx_train": n_ctx_train,
                "n_batch": cparams.n_batch,
                "n_threads": self.n_threads,
            },
        )

    # -- tokens --------------------------------------------------------------------
    def _tokenize(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8
        for _ in range(2):
            buf = (self.L.llama_token * capacity)()
            n = self.L.llama_tokenize(self.vocab, data, len(data), buf, capacity, True, True)
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
    def _decode(self, tokens: ctypes.Array[Any], start: int, count: int) -> None:
        L = self.L
        pointer = ctypes.cast(
            ctypes.addressof(tokens) + start * ctypes.sizeof(L.llama_token),
            ctypes.POINTER(L.llama_token),
        )
        rc = L.llama_decode(self.ctx, L.llama_batch_get_one(pointer, count))
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}: {self.log.last_error()}")

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        L = self.L
        t_start = now()
        tokens = self._tokenize(prompt)
        n_prompt = len(tokens)
        n_ctx = L.llama_n_ctx(self.ctx)
        if n_prompt + settings.max_tokens > n_ctx:
            raise UserError(
                f"prompt of {n_prompt} tokens + max_tokens {settings.max_tokens} "
                f"does not fit n_ctx {n_ctx}"
            )
        # A fresh KV cache and fresh counters for every request.
        L.llama_memory_clear(L.llama_get_memory(self.ctx), True)
        L.llama_sampler_reset(self.sampler)
        L.llama_perf_context_reset(self.ctx)

        prompt_array = (L.llama_token * n_prompt)(*tokens)
        n_batch = L.llama_n_batch(self.ctx)
        for start in range(0, n_prompt, n_batch):
            self._decode(prompt_array, start, min(n_batch, n_prompt - start))

        one = (L.llama_token * 1)()
        piece_buf = ctypes.create_string_buffer(64)
        out = bytearray()
        stops = [s.encode("utf-8") for s in settings.stop]
        longest_stop = max((len(s) for s in stops), default=0)
        output_tokens = 0
        generated = 0
        finish = FINISH_LENGTH
        error = None
        t_first: float | None = None
        try:
            while True:
                token = L.llama_sampler_sample(self.sampler, self.ctx, -1)
                generated += 1
                if t_first is None:
                    t_first = now()
                if L.llama_vocab_is_eog(self.vocab, token):
                    finish = FINISH_STOP
                    break
                checked_upto = max(0, len(out) - longest_stop + 1)
                out += self._piece(token, piece_buf)
                output_tokens += 1
                if stops and _cut_at_stop(out, stops, checked_upto):
                    finish = FINISH_STOP
                    break
                if output_tokens >= settings.max_tokens:
                    break
                one[0] = token
                self._decode(one, 0, 1)
        except RuntimeError as exc:
            finish, error = FINISH_ERROR, str(exc)
        t_end = now()
        perf = L.llama_perf_context(self.ctx)
        return Generation(
            text=out.decode("utf-8", "replace"),
            prompt_tokens=n_prompt,
            output_tokens=output_tokens,
            generated_tokens=generated,
            finish_reason=finish,
            t_start=t_start,
            t_first_token=t_first,
            t_end=t_end,
            error=error,
            runtime_counters={
                "t_p_eval_ms": perf.t_p_eval_ms,
                "n_p_eval": perf.n_p_eval,
                "t_eval_ms": perf.t_eval_ms,
                "n_eval": perf.n_eval,
            },
        )

    def _free(self) -> None:
        L = self.L
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


def _cut_at_stop(out: bytearray, stops: list[bytes], start: int) -> bool:
    """Truncate `out` before a stop string that ends in the newly added bytes.

    `start` is where a stop string could begin that was not already checked."""
    for stop in stops:
        index = out.find(stop, start)
        if index != -1:
            del out[index:]
            return True
    return False
