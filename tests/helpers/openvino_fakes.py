"""A fake `openvino_genai` (and the little of `openvino` the backend touches) for the
openvino backend's unit tests: no real package needed.

The tokenizer is byte-level: token id = byte + 3, BOS 1, EOS 2, and the text
"<|im_end|>" is EOS when special tokens are parsed. The pipeline streams a scripted
answer token by token on a virtual clock (`Clock`): `PREFILL_S` for the prompt, then
`STEP_S` per token, then `TAIL_S` of its own bookkeeping before generate() returns; its
PerfMetrics report the same figures. Module-level switches script the failures:
`FAIL_LOAD` (an unsupported topology), `REFUSE_MARKER` (a schema XGrammar refuses),
`CRASH_MARKER` (the native code dies: SIGSEGV), each read at call time. With
`ignore_eos` it makes `min_new_tokens` tokens, the answer repeated (less `short_by`: a
pipeline that stops early), as the bench's generate() asks.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BOS, EOS, OFFSET = 1, 2, 3
END_TEXT = "<|im_end|>"
PREFILL_S, STEP_S, TAIL_S = 0.050, 0.010, 0.004
GRAMMAR_MS = 1.5  # XGrammar's compile, as PerfMetrics reports it
# How XGrammar's refusals read (a time stamp and its source file first).
REFUSAL = '[21:12:25] /build/xgrammar/json_schema_converter.cc:898: Unsupported type "x"\nmore'


class Clock:
    """A virtual clock the pipeline advances; patched in for `now`."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


@dataclass
class Script:
    """What the fake pipeline does: the answer it streams, and its scripted failures."""

    answer: str = '{"a": 1}'
    end_with_eos: bool = True
    fail_load: str | None = None  # the message LLMPipeline raises
    refuse_marker: str = "x-refuse"  # a schema holding this key is refused
    crash_marker: str | None = None  # a prompt holding this dies with SIGSEGV
    short_by: int = 0  # with ignore_eos: make this many tokens fewer than min_new_tokens
    fail_generate: str | None = None  # the message generate() raises
    clock: Clock = field(default_factory=Clock)
    requests: list[dict[str, Any]] = field(default_factory=list)  # what generate() got
    pipeline_props: dict[str, Any] = field(default_factory=dict)


SCRIPT = Script()


class MeanStd:
    def __init__(self, mean: float) -> None:
        self.mean, self.std = mean, 0.0


class PerfMetrics:
    def __init__(
        self, n_input: int, n_generated: int, ttft_ms: float, total_ms: float, structured: bool
    ) -> None:
        self.n_input, self.n_generated, self.structured = n_input, n_generated, structured
        self.ttft_ms, self.total_ms = ttft_ms, total_ms

    def get_ttft(self) -> MeanStd:
        return MeanStd(self.ttft_ms)

    def get_tpot(self) -> MeanStd:
        return MeanStd(STEP_S * 1000)

    def get_generate_duration(self) -> MeanStd:
        return MeanStd(self.total_ms)

    def get_inference_duration(self) -> MeanStd:
        return MeanStd(self.total_ms - TAIL_S * 1000)

    def get_tokenization_duration(self) -> MeanStd:
        return MeanStd(0.0)

    def get_detokenization_duration(self) -> MeanStd:
        return MeanStd(0.0)

    def get_num_input_tokens(self) -> int:
        return self.n_input

    def get_num_generated_tokens(self) -> int:
        return self.n_generated

    def get_grammar_compile_time(self) -> MeanStd:
        return MeanStd(GRAMMAR_MS)

    @property
    def raw_metrics(self) -> types.SimpleNamespace:
        times = [GRAMMAR_MS * 1000] if self.structured else []
        # the intervals between new tokens (µs, as 2026.4 gives them), the first (the
        # prefill's) not one of them
        steps = [STEP_S * 1e6] * max(self.n_generated - 1, 0)
        return types.SimpleNamespace(grammar_compile_times=times, m_durations=steps)


class Tensor:
    def __init__(self, array: Any) -> None:
        self.data = np.asarray(array)


class TokenizedInputs:
    def __init__(self, input_ids: Tensor, attention_mask: Tensor) -> None:
        self.input_ids, self.attention_mask = input_ids, attention_mask


class StreamingStatus:
    RUNNING, STOP, CANCEL = 0, 1, 2


class StreamerBase:
    def __init__(self) -> None:
        pass


def _encode_text(text: str, special: bool) -> list[int]:
    ids: list[int] = []
    parts = text.split(END_TEXT) if special else [text]
    for i, part in enumerate(parts):
        if i:
            ids.append(EOS)
        ids += [b + OFFSET for b in part.encode("utf-8")]
    return ids


class Tokenizer:
    def __init__(self, path: str = "") -> None:
        if SCRIPT.fail_load is not None:
            raise RuntimeError(SCRIPT.fail_load)

    def encode(self, text: str, add_special_tokens: bool = True) -> TokenizedInputs:
        ids = ([BOS] if add_special_tokens else []) + _encode_text(text, special=True)
        return TokenizedInputs(Tensor([ids]), Tensor([[1] * len(ids)]))

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        data = bytes(i - OFFSET for i in ids if i >= OFFSET)
        return data.decode("utf-8", "replace")

    def get_bos_token_id(self) -> int:
        return BOS

    def get_eos_token_id(self) -> int:
        return EOS


class StructuredOutputConfig:
    """Takes any schema: XGrammar reads it inside generate(), as the real one does."""

    def __init__(self, json_schema: str) -> None:
        self.json_schema = json_schema


class GenerationConfig:
    def __init__(self) -> None:
        self.max_new_tokens = 20
        self.eos_token_id = EOS
        self.apply_chat_template = True
        self.ignore_eos = False
        self.stop_strings: set[str] = set()
        self.do_sample = False
        self.temperature = 1.0
        self.top_k = 50
        self.top_p = 1.0
        self.rng_seed = 0
        self.min_new_tokens = 0
        self.num_beams = 1
        self.repetition_penalty = 1.1  # as a folder's generation_config.json may say
        self.presence_penalty = 0.0
        self.frequency_penalty = 0.0
        self.min_p = 0.0
        self.structured_output_config: StructuredOutputConfig | None = None

    def validate(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be positive")


class EncodedResults:
    def __init__(self, tokens: list[int], perf_metrics: PerfMetrics) -> None:
        self.tokens, self.perf_metrics = [tokens], perf_metrics


class LLMPipeline:
    def __init__(self, path: str, device: str, **props: Any) -> None:
        if SCRIPT.fail_load is not None:
            raise RuntimeError(SCRIPT.fail_load)
        SCRIPT.pipeline_props = {"path": path, "device": device, **props}
        self.tokenizer = Tokenizer(path)

    def get_tokenizer(self) -> Tokenizer:
        return self.tokenizer

    def get_generation_config(self) -> GenerationConfig:
        return GenerationConfig()

    def generate(
        self, inputs: TokenizedInputs, config: GenerationConfig, streamer: Any = None
    ) -> Any:
        prompt = [int(t) for t in inputs.input_ids.data[0]]
        text = self.tokenizer.decode(prompt)
        SCRIPT.requests.append({"prompt": prompt, "config": config})
        structured = config.structured_output_config
        if structured is not None and SCRIPT.refuse_marker in json.loads(structured.json_schema):
            raise RuntimeError(REFUSAL)
        if SCRIPT.crash_marker is not None and SCRIPT.crash_marker in text:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        if SCRIPT.fail_generate is not None:
            raise RuntimeError(SCRIPT.fail_generate)
        clock = SCRIPT.clock
        start = clock()
        clock.advance(PREFILL_S)
        answer = _encode_text(SCRIPT.answer, special=False)
        if config.ignore_eos:  # the answer over and over, never an end
            count = config.min_new_tokens - SCRIPT.short_by
            answer = (answer * count)[:count]
        elif SCRIPT.end_with_eos:
            answer.append(EOS)
        out: list[int] = []
        ttft = None
        for i, token in enumerate(answer[: config.max_new_tokens]):
            if i:
                clock.advance(STEP_S)
            ttft = ttft if ttft is not None else (clock() - start) * 1000
            out.append(token)
            running = streamer is None or streamer.write([token]) == StreamingStatus.RUNNING
            if not running or token == EOS:
                break
        clock.advance(TAIL_S)
        total_ms = (clock() - start) * 1000
        metrics = PerfMetrics(len(prompt), len(out), ttft or 0.0, total_ms, structured is not None)
        return EncodedResults(out, metrics)


class Core:
    def get_property(self, device: str, name: str) -> Any:
        if name == "OPTIMIZATION_CAPABILITIES":
            return ["FP32", "INT8"]
        return "Fake CPU"


def fake_packages(folder: Path, crash_marker: str) -> Path:
    """`openvino_genai` and `openvino` modules in `folder` that are these fakes, for a
    worker process (spawned: it imports them from sys.path, which it inherits), with
    prompts holding `crash_marker` killing it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openvino_genai.py").write_text(
        "from tests.helpers import openvino_fakes as _fakes\n"
        "from tests.helpers.openvino_fakes import *  # noqa: F403\n"
        f"_fakes.SCRIPT.crash_marker = {crash_marker!r}\n"
        "__version__ = '2026.4.1.0-fake'\n"
    )
    (folder / "openvino.py").write_text(
        "from tests.helpers.openvino_fakes import Core, Tensor  # noqa: F401\n\n\n"
        "def get_version() -> str:\n    return '2026.4.1-fake'\n"
    )
    return folder


def install(monkeypatch: pytest.MonkeyPatch, script: Script | None = None) -> Script:
    """Put the fakes in sys.modules as `openvino_genai` and `openvino`, with a fresh
    script, and the backend's clock on the script's virtual clock."""
    global SCRIPT
    SCRIPT = script or Script()
    genai = types.ModuleType("openvino_genai")
    for name in (
        "LLMPipeline",
        "Tokenizer",
        "TokenizedInputs",
        "GenerationConfig",
        "StructuredOutputConfig",
        "StreamerBase",
        "StreamingStatus",
    ):
        setattr(genai, name, globals()[name])
    genai.__version__ = "2026.4.1.0-fake"  # type: ignore[attr-defined]
    openvino = types.ModuleType("openvino")
    openvino.Tensor = Tensor  # type: ignore[attr-defined]
    openvino.Core = Core  # type: ignore[attr-defined]
    openvino.get_version = lambda: "2026.4.1-fake"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "openvino_genai", genai)
    monkeypatch.setitem(sys.modules, "openvino", openvino)
    import edgebench.backends.decoding as decoding
    import edgebench.backends.openvino as backend

    monkeypatch.setattr(backend, "now", SCRIPT.clock)
    monkeypatch.setattr(decoding, "now", SCRIPT.clock)
    return SCRIPT
