"""OpenVINO GenAI's `LLMPipeline` on the CPU: a GGUF file it reads itself
(`NAME@openvino`) or a folder exported for it (`NAME@openvino-int4`).

The pipeline runs its own decode loop in C++, so edgebench does not pick tokens here: it
hands the pipeline token ids and a `GenerationConfig`, and watches the tokens come back
through a streamer. Every streamed token goes through `DecodeState.emit`, so the
answer-ending policies (stop at the JSON, loop detection) and stop strings hold: the
streamer tells the pipeline to stop. The first streamed token stamps time to first token
and the last one the end of decoding; the pipeline's own `PerfMetrics` (TTFT, TPOT,
durations, token counts) are kept in `runtime_counters` to cross-check them.

The prompt arrives rendered with the chat template (prompts.py), so it is tokenized here
without special tokens added and without the pipeline's chat template
(`apply_chat_template` off: it would be applied a second time), BOS added only when the
model asks for it and the text does not start with it, as llama.cpp reads the same GGUF.

Constraints: `xgrammar` is OpenVINO GenAI's structured output (`StructuredOutputConfig`
with the task's JSON Schema), which XGrammar enforces inside the pipeline. `mask` needs
per-step logits in Python, which the pipeline does not expose on its generation path;
`mask`, `gbnf` and `outlines` are declared unsupported in runtimes.py with their reasons.
`json` is XGrammar's any-JSON-object grammar through the same config. Greedy decoding by
default; `temperature > 0` samples with the pipeline's own generator seeded by `seed`
(multinomial over the whole vocabulary: top_k, top_p and min_p off).

`edgebench bench`: the pipeline evaluates tokens only inside generate(), so its rows are a
`TimedProbe` (backends/speed.py): one generate() per repetition, timed by its own
PerfMetrics (runtimes.py: OPENVINO's `bench_timing` says how); ppN @ dD cannot be.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from edgebench.backends.base import DecodeSettings, Generation, LoadInfo, now
from edgebench.backends.decoding import CompiledConstraints, DecodeState, require_fit
from edgebench.backends.speed import ProbeVocab
from edgebench.backends.speed_test import PROMPT
from edgebench.constraints.spec import CompileReport, ConstraintRequest
from edgebench.errors import UserError
from edgebench.models.gguf import read_gguf
from edgebench.readback import read_json_object
from edgebench.runfolder.records import FINISH_ERROR, FINISH_LENGTH, FINISH_STOP
from edgebench.runtimes import pp_depth_refusal

OPENVINO_EXTRA_HINT = "pip install 'edgebench[openvino]'"
_SUPPORTED = ("none", "json", "xgrammar")
_DEVICE = "CPU"
# What the CPU plugin says of itself in the runtime block (cheap property reads).
_CPU_PROPERTIES = ("FULL_DEVICE_NAME", "OPTIMIZATION_CAPABILITIES")
NO_TOP_K = 2**64 - 1  # OpenVINO GenAI's "no top-k" (SIZE_MAX)


# `json`: XGrammar's JSON grammar for any object (the hand-written grammars/json.gbnf is
# not in the EBNF dialect XGrammar parses).
ANY_OBJECT: dict[str, Any] = {"type": "object"}
# XGrammar's errors start with a time stamp and its source file: "[21:12:25] /.../x.cc:898: "
_XGRAMMAR_PREFIX = re.compile(r"^\[[\d:]+\] \S+:\d+: ")


def xgrammar_message(exc: BaseException) -> str:
    """XGrammar's error as one line, without its time stamp and source path."""
    return _XGRAMMAR_PREFIX.sub("", _first_line(exc)).strip() or type(exc).__name__


def import_genai() -> Any:
    try:
        import openvino_genai
    except ImportError:
        raise UserError(
            f"the openvino backend needs openvino-genai: {OPENVINO_EXTRA_HINT}"
        ) from None
    return openvino_genai


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cpu_plugin() -> dict[str, Any]:
    """OpenVINO's version and the CPU plugin's name and capabilities; a property the
    plugin does not answer is left out (this is description, not a requirement)."""
    try:
        import openvino
    except ImportError:
        return {}
    info: dict[str, Any] = {"openvino": openvino.get_version()}
    try:
        core = openvino.Core()
    except Exception:  # a broken plugin install: the run will say so at load
        return info
    for name in _CPU_PROPERTIES:
        try:
            value = core.get_property(_DEVICE, name)
        except Exception:
            continue
        info[name.lower()] = list(value) if isinstance(value, list | tuple) else str(value)
    return info


def doctor_facts() -> dict[str, str]:
    """What `edgebench doctor` shows of the installed runtime, label -> value: the
    versions of openvino-genai and OpenVINO, and the CPU plugin's name and capabilities."""
    genai = import_genai()
    plugin = cpu_plugin()
    version = getattr(genai, "__version__", None) or genai.get_version()
    capabilities = plugin.get("optimization_capabilities")
    if isinstance(capabilities, list):
        capabilities = " ".join(capabilities)
    return {
        "version": f"openvino-genai {version}, OpenVINO {plugin.get('openvino', 'not installed')}",
        "CPU plugin": plugin.get("full_device_name") or "not reported",
        "capabilities": capabilities or "not reported",
    }


@dataclass
class _StructuredOutput:
    """A schema as OpenVINO GenAI takes it: the structured-output config to attach to
    each request's GenerationConfig."""

    report: CompileReport
    config: Any = None
    seconds: float = 0.0  # building the config + XGrammar's compile


@dataclass
class _StreamWatch:
    """One request's streamed tokens: counted, decoded, cut at stop strings and shown
    to the answer-ending policies; `push` says when the pipeline must stop."""

    state: DecodeState
    decode: Any  # token ids -> text (the pipeline's detokenizer)
    stops: tuple[str, ...]
    eog: frozenset[int]
    max_tokens: int
    ids: list[int] = field(default_factory=list)
    cut: str | None = None  # the text before a stop string, once one appeared
    seen: int = 0  # characters of the decoded text the policies have seen
    t_last: float | None = None  # when the last token arrived

    def push(self, token: int) -> bool:
        state = self.state
        if state.output_tokens >= self.max_tokens:
            return True  # the pipeline streamed past the budget: not part of the answer
        state.sampled()
        self.t_last = now()
        if token in self.eog:
            state.finish = FINISH_STOP
            return True
        self.ids.append(token)
        text = self.decode(self.ids)
        for stop in self.stops:
            index = text.find(stop)
            if index != -1:
                self.cut = text[:index]
                state.output_tokens += 1
                state.finish = FINISH_STOP
                return True
        # the policies see the text as it becomes stable (no unfinished character at its end)
        stable = len(text) - 1 if text.endswith("\ufffd") else len(text)
        piece = text[self.seen : stable].encode("utf-8")
        self.seen = max(self.seen, stable)
        ended = state.emit(token, piece)
        return ended or state.output_tokens >= self.max_tokens

    def text(self) -> str:
        return self.cut if self.cut is not None else self.decode(self.ids)


def token_streamer(genai: Any, watch: _StreamWatch) -> Any:
    """A StreamerBase that hands each token id to `watch` and stops the pipeline when
    it says so (a subclass of the loaded module's class, so it is made here)."""

    class OpenVinoTokenStreamer(genai.StreamerBase):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.stopped = False

        def write(self, token: Any) -> Any:
            tokens = token if isinstance(token, list | tuple) else [token]
            for one in tokens:
                if self.stopped or watch.push(int(one)):
                    self.stopped = True
                    return genai.StreamingStatus.STOP
            return genai.StreamingStatus.RUNNING

        def end(self) -> None:
            return None

    return OpenVinoTokenStreamer()


class OpenVinoBackend:
    name = "openvino"

    def __init__(self, model_path: str, n_threads: int, constraint_mode: str = "none") -> None:
        if constraint_mode not in _SUPPORTED:
            raise UserError(f"the openvino backend has no '{constraint_mode}' constraint mode")
        self.model_path = Path(model_path)
        self.n_threads = n_threads
        self.constraint_mode = constraint_mode
        self.genai: Any = None
        self.pipe: Any = None
        self.tokenizer: Any = None
        self.n_ctx = 0
        self.bos_id: int | None = None
        self.add_bos = False
        self.eog: frozenset[int] = frozenset()
        self._compiled = CompiledConstraints(constraint_mode, self._compile)

    # -- tokens --------------------------------------------------------------------
    def _ensure_tokenizer(self) -> Any:
        if self.tokenizer is None:
            self.genai = self.genai or import_genai()
            try:
                self.tokenizer = self.genai.Tokenizer(str(self.model_path))
            except Exception as exc:  # the tokenizer raises RuntimeError on a bad file
                raise UserError(
                    f"OpenVINO GenAI could not read the tokenizer of {self.model_path}: "
                    f"{_first_line(exc)}"
                ) from None
            self._read_special_tokens()
        return self.tokenizer

    def _read_special_tokens(self) -> None:
        tokenizer = self.tokenizer
        bos = int(tokenizer.get_bos_token_id())
        self.bos_id = bos if bos >= 0 else None
        # A BOS the tokenizer adds with special tokens on is one the model asks for.
        probe = self._ids(tokenizer.encode("a", add_special_tokens=True))
        self.add_bos = self.bos_id is not None and bool(probe) and probe[0] == self.bos_id
        eos = int(tokenizer.get_eos_token_id())
        self.eog = frozenset({eos} if eos >= 0 else set())

    @staticmethod
    def _ids(encoded: Any) -> list[int]:
        return [int(t) for t in encoded.input_ids.data[0]]

    def encode(self, text: str) -> list[int]:
        """Token ids as llama.cpp reads the same prompt: special tokens of the rendered
        template parsed, BOS only when the model asks for it (never twice)."""
        tokenizer = self._ensure_tokenizer()
        ids = self._ids(tokenizer.encode(text, add_special_tokens=False))
        if self.add_bos and self.bos_id is not None and (not ids or ids[0] != self.bos_id):
            ids.insert(0, self.bos_id)
        return ids

    def count_tokens(self, prompts: list[str]) -> list[int]:
        return [len(self.encode(p)) for p in prompts]

    def _decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=True))

    # -- loading -------------------------------------------------------------------
    def load(self, n_ctx: int) -> LoadInfo:
        genai = self.genai = self.genai or import_genai()
        if not self.model_path.exists():
            raise UserError(f"model not found: {self.model_path}")
        try:
            self.pipe = genai.LLMPipeline(
                str(self.model_path), _DEVICE, INFERENCE_NUM_THREADS=self.n_threads
            )
        except Exception as exc:  # unsupported topology, unreadable file: RuntimeError
            raise UserError(
                f"OpenVINO GenAI could not load {self.model_path}: {_first_line(exc)}"
            ) from None
        self.tokenizer = self.pipe.get_tokenizer()
        self._read_special_tokens()
        eos = int(self.pipe.get_generation_config().eos_token_id)
        if eos >= 0:
            self.eog = self.eog | {eos}
        self.n_ctx = n_ctx
        version = getattr(genai, "__version__", None) or genai.get_version()
        return LoadInfo(
            n_ctx=n_ctx,
            runtime={
                "name": "OpenVINO GenAI",
                "openvino_genai": version,
                "device": _DEVICE,
                "inference_num_threads": self.n_threads,
                "model": "gguf" if self.model_path.is_file() else "exported folder",
                "constraint_mode": self.constraint_mode,
                "build": cpu_plugin(),
            },
        )

    # -- constraints ---------------------------------------------------------------
    def compile_constraint(self, request: ConstraintRequest) -> CompileReport:
        report = self._compiled.compile(request)
        if report.cached or not report.ok:
            return report
        # The grammar's compile time is XGrammar's own (from the probe's PerfMetrics),
        # plus building the config: not the probe's one-token generate() around it.
        compiled = self._compiled.entries[request.key]
        compiled.report = replace(report, seconds=compiled.seconds)
        return compiled.report

    def _compile(self, request: ConstraintRequest) -> _StructuredOutput:
        """The structured-output config for the schema (`json`: any JSON object), and
        XGrammar's verdict on it. The config does not check a schema; XGrammar compiles
        it inside generate(), so a one-token generate() on one token is the check, and
        XGrammar's compile time in its PerfMetrics is the compile time. XGrammar compiles
        the grammar again inside every later generate() (about 1 ms here: the
        `grammar_compile_ms` counter of each answer)."""
        genai = self.genai = self.genai or import_genai()
        start = now()
        schema = ANY_OBJECT if request.mode == "json" else request.schema
        source = "xgrammar: any JSON object" if request.mode == "json" else "xgrammar"
        try:
            config = genai.StructuredOutputConfig(json_schema=json.dumps(schema))
            built = now() - start
            probe = self._config(DecodeSettings(max_tokens=1), None)
            probe.structured_output_config = config
            result = self.pipe.generate(self._inputs(self._probe_ids()), probe)
        except Exception as exc:  # XGrammar's refusal comes back as a RuntimeError
            error = f"XGrammar: {xgrammar_message(exc)}"
            return _StructuredOutput(CompileReport.new(request, source, error=error))
        compile_ms = float(result.perf_metrics.get_grammar_compile_time().mean)
        return _StructuredOutput(
            CompileReport.new(request, source), config, built + compile_ms / 1000
        )

    def _probe_ids(self) -> list[int]:
        return [self.bos_id] if self.bos_id is not None else self.encode(" ")[:1]

    # -- decoding ------------------------------------------------------------------
    def _config(self, settings: DecodeSettings, compiled: _StructuredOutput | None) -> Any:
        """The model's generation config (its end tokens) with edgebench's decoding:
        the budget, no chat template, and every sampling knob a folder's
        generation_config.json may set back to neutral."""
        config = self.pipe.get_generation_config()
        config.max_new_tokens = settings.max_tokens
        config.min_new_tokens = 0
        config.apply_chat_template = False  # edgebench rendered the template already
        config.ignore_eos = False
        config.stop_strings = set()  # cut by the watch, as on the other runtimes
        config.num_beams = 1
        config.repetition_penalty = 1.0
        config.presence_penalty = 0.0
        config.frequency_penalty = 0.0
        config.top_k = NO_TOP_K
        config.top_p = 1.0
        config.min_p = 0.0
        config.do_sample = settings.sampling
        if settings.sampling:
            config.temperature = settings.temperature
            config.rng_seed = settings.seed
        config.structured_output_config = compiled.config if compiled is not None else None
        return config

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        t_start = now()
        ids = self.encode(prompt)
        require_fit(len(ids), settings, self.n_ctx)
        compiled = self._compiled.usable(settings.constraint) if settings.constraint else None
        state = DecodeState.under(settings.end)
        watch = _StreamWatch(state, self._decode, settings.stop, self.eog, settings.max_tokens)
        counters: dict[str, float] = {}
        try:
            inputs = self._inputs(ids)
            result = self.pipe.generate(
                inputs, self._config(settings, compiled), token_streamer(self.genai, watch)
            )
            counters = perf_counters(result.perf_metrics)
        except Exception as exc:  # the pipeline's errors: this example fails, not the run
            state.finish = FINISH_ERROR
            state.error = f"{type(exc).__name__}: {xgrammar_message(exc)}"
        t_end = now()
        ended_itself = state.finish == FINISH_LENGTH and state.error is None
        if ended_itself and state.output_tokens < settings.max_tokens:
            state.finish = FINISH_STOP  # the pipeline stopped on an end token it did not stream
        state.out = bytearray(watch.text().encode("utf-8"))
        if watch.t_last is not None:
            counters["streamer_decode_ms"] = (watch.t_last - (state.t_first or t_end)) * 1000
        # Decoding ends with the last streamed token; what follows is the pipeline's
        # own detokenizing and bookkeeping, not decode time.
        end = watch.t_last if watch.t_last is not None else t_end
        counters["after_last_token_ms"] = (t_end - end) * 1000
        return state.generation(len(ids), t_start, end, counters)

    def _inputs(self, ids: list[int]) -> Any:
        import numpy as np
        import openvino

        tokens = np.array([ids], dtype=np.int64)
        return self.genai.TokenizedInputs(
            openvino.Tensor(tokens), openvino.Tensor(np.ones_like(tokens))
        )

    # -- speed probe (edgebench bench) ------------------------------------------------
    def probe_vocab(self) -> ProbeVocab:
        bos = self.bos_id if self.add_bos else None
        return ProbeVocab(size=vocab_size(self.model_path), bos=bos)

    def probe_time(self, kind: str, prefix: Sequence[int], timed: Sequence[int]) -> float:
        """One repetition timed by the pipeline's PerfMetrics (runtimes.py, OPENVINO's
        `bench_timing`): pp, the inference of a generate() of the prompt `timed` with
        one new token; tg, `len(timed)` times the mean interval between new tokens (TPOT)
        of a generate() of one more new token with EOS ignored, after the prompt
        `prefix` (or the first timed token: a prompt needs one). No streamer: nothing
        but the pipeline runs."""
        n = len(timed)
        if kind == PROMPT and prefix:
            raise UserError(str(pp_depth_refusal(self.name, f"{kind}{n} @ d{len(prefix)}")))
        prompt = list(timed) if kind == PROMPT else list(prefix or timed[:1])
        new = 1 if kind == PROMPT else n + 1
        config = self._config(DecodeSettings(max_tokens=new), None)
        config.min_new_tokens = new
        config.ignore_eos = True
        try:
            metrics = self.pipe.generate(self._inputs(prompt), config).perf_metrics
        except Exception as exc:  # the pipeline's RuntimeError, as one line
            raise RuntimeError(f"OpenVINO GenAI failed on {kind}{n}: {_first_line(exc)}") from None
        return probe_seconds(metrics, kind, len(prompt), new)

    def close(self) -> None:
        self.pipe = None


def vocab_size(path: Path) -> int:
    """The vocabulary's size as the model's files say: an exported folder's config.json,
    a GGUF's token list. (The pipeline's tokenizer cannot list a byte-level vocabulary:
    get_vocab_vector() fails to decode its byte tokens as UTF-8.)"""
    if path.is_dir():
        size = read_json_object(path / "config.json", "the model's config").get("vocab_size")
    else:
        vocabulary = read_gguf(path).vocabulary
        size = vocabulary.size if vocabulary is not None else None
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise UserError(
            f"{path}: no vocabulary size (config.json's vocab_size, a GGUF's token list) "
            "to draw the bench's token ids from"
        )
    return size


def probe_seconds(metrics: Any, kind: str, prompt: int, new: int) -> float:
    """The timed part of a bench generate() from its PerfMetrics (getters in ms), checked
    to be the tokens asked for: pp, the inference duration (the prefill: one new token);
    tg, `new - 1` times TPOT, the mean of the intervals between new tokens (the first
    token's, the prefill's, not one of them), when there are that many intervals."""
    got_in, got_new = metrics.get_num_input_tokens(), metrics.get_num_generated_tokens()
    if (got_in, got_new) != (prompt, new):
        raise RuntimeError(
            f"OpenVINO GenAI read {got_in} prompt tokens and made {got_new} new ones; the "
            f"bench asked for {prompt} and {new}"
        )
    if kind == PROMPT:
        ms = float(metrics.get_inference_duration().mean)
    elif len(metrics.raw_metrics.m_durations) == new - 1:
        ms = float(metrics.get_tpot().mean) * (new - 1)
    else:  # a batch of tokens stamped at once: no interval per token
        ms = -1.0
    if ms <= 0:
        raise RuntimeError(f"OpenVINO GenAI's PerfMetrics have no {kind} duration to time")
    return ms / 1000


def perf_counters(metrics: Any) -> dict[str, float]:
    """The pipeline's own figures for one generate(), in ms and tokens."""
    counters = {
        "ttft_ms": metrics.get_ttft().mean,
        "tpot_ms": metrics.get_tpot().mean,
        "generate_duration_ms": metrics.get_generate_duration().mean,
        "inference_duration_ms": metrics.get_inference_duration().mean,
        "tokenization_ms": metrics.get_tokenization_duration().mean,
        "detokenization_ms": metrics.get_detokenization_duration().mean,
        "num_input_tokens": metrics.get_num_input_tokens(),
        "num_generated_tokens": metrics.get_num_generated_tokens(),
    }
    if list(metrics.raw_metrics.grammar_compile_times):  # a structured-output request
        counters["grammar_compile_ms"] = metrics.get_grammar_compile_time().mean
    return {k: float(v) for k, v in counters.items()}
