"""The records of a run folder, one shape whatever the run holds.

    manifest.json   Manifest: what ran (models, task, dataset, settings, device,
                    versions) and how each arm went (ArmRecord)
    samples.jsonl   SampleRecord per line: one (example, arm[, sampling]) each, a
                    re-timed example's later line (passes > 1) superseding its first
    summary.json    Summary: figures derived from the two above

and the one file `edgebench bench` writes: BenchRecord (its rows: BenchRow).

A run of one model has `models: [one]` and its arms keyed by (model, constraint) exactly
like a run of five. Every record is complete when it is built: a run writes a new
manifest (`dataclasses.replace`) instead of editing one in place.

`SCHEMA_VERSION` is "major.minor": a minor version only adds fields (readers ignore
fields they do not know); a reader refuses a major version it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from edgebench.record import Record
from edgebench.system.cpu_share import contended
from edgebench.system.records import Device

SCHEMA_VERSION = "2.11"
DEFAULT_MAX_CRASHES = 3  # worker failures in a row before an arm gives up
# seconds one schema may take to compile under one engine (`--compile-timeout`)
DEFAULT_COMPILE_TIMEOUT = 60.0
# `--retime`: decode contended examples again after their arm, or not
RETIME_MODES = ("contended", "none")
DEFAULT_RETIME_MAX = 2  # `--retime-max`: passes at most per contended example

Number = int | float
RunKind = Literal["run", "consistency"]
ArmStatus = Literal["running", "completed", "interrupted", "failed", "crashed", "skipped"]
RunStatus = Literal["running", "completed", "interrupted", "failed", "crashed"]
CompileOutcome = Literal["compiled", "refused", "crashed"]

# Why an answer ended: a backend's `Generation.finish_reason`, a sample's `finish_reason`.
FinishReason = Literal[
    "stop", "length", "json_complete", "loop", "error", "unsupported", "skipped", "crashed",
    "timeout",
]  # fmt: skip
FINISH_STOP: FinishReason = "stop"  # end-of-generation token or a stop string
FINISH_LENGTH: FinishReason = "length"  # hit max_tokens
FINISH_JSON_COMPLETE: FinishReason = "json_complete"  # the first top-level JSON value was complete
FINISH_LOOP: FinishReason = "loop"  # the last tokens repeated with a short period
FINISH_ERROR: FinishReason = "error"  # the backend raised on this example
FINISH_UNSUPPORTED: FinishReason = "unsupported"  # the constraint could not be compiled
FINISH_SKIPPED: FinishReason = "skipped"  # the prompt does not fit the context limit
FINISH_CRASHED: FinishReason = "crashed"  # the worker process died on this example
FINISH_TIMEOUT: FinishReason = "timeout"  # the example outlived --timeout; the worker was killed
# How a sample's constraint went: none (free mode), applied, or unsupported (refused)
ConstraintStatus = Literal["none", "applied", "unsupported"]
# How a bench worker ended: stopped when another worker of its group failed first
WorkerStatus = Literal["running", "completed", "stopped", "interrupted", "failed", "crashed"]
# How a fidelity run (or one of its variants) ended
FidelityStatus = Literal["running", "completed", "failed", "interrupted"]


# -- what was asked ---------------------------------------------------------------
@dataclass(frozen=True)
class RunSettings(Record):
    """Everything that decides what a run measures (the options of `edgebench run`).

    `timeout`, `compile_timeout`, `max_crashes` and `check_memory` decide how the run
    copes with trouble, not what it measures, so `--resume` may change them."""

    model: str | None = None  # `--model` as given (None: the default model)
    task: str = "edgejson"  # `--task`
    dataset: Path | None = None  # `--dataset` (None: the task's built-in set)
    schemas: Path | None = None  # `--schemas`
    limit: int | None = None  # `--limit`: the first N examples
    threads: int = 2  # `--threads`
    max_tokens: int | None = None  # `--max-tokens` (None: per schema, automatic)
    n_ctx: int | None = None  # `--n-ctx` (None: sized to the prompts)
    max_context: int | None = None  # `--max-context`
    out: Path | None = None  # the run folder
    warmup: bool = True  # one untimed generation before measuring
    constraints: tuple[str, ...] = ("none",)  # constraint modes, one arm each
    guard: bool = True  # the keyword guard in the schema modes
    timeout: float | None = None  # seconds one example may take
    # seconds one schema may take to compile under one engine; past it the schema is
    # unsupported for the rest of the arm
    compile_timeout: float = DEFAULT_COMPILE_TIMEOUT
    max_crashes: int = DEFAULT_MAX_CRASHES  # worker failures in a row before an arm gives up
    check_memory: bool = True  # refuse a model that will not fit in memory
    metrics: tuple[str, ...] = ()  # metric families beyond the task's own
    # family -> parameter -> value (`--metric-param`)
    metric_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    stop_at_json: bool = True  # free modes end at the first complete JSON value
    loop_detection: bool = True  # an answer that repeats a short period ends (`loop`)
    close_tokens: int = 256  # tokens a `+close` arm may add to close a cut-off answer
    prefix_cache: bool = False  # keep the KV of the prompt prefix a schema's examples share
    sample: int | None = None  # `--sample`: a seeded subset of N examples
    stratify: str | None = None  # `--stratify`: the group key the subset is spread over
    seed: int = 0  # `--seed`: the subset's seed (consistency: also the first draw's)
    strict_data: bool = False  # `--strict-data`: refuse a file with invalid expected outputs
    # `--parse`: lenient (edgebench's extraction) or reference (the task's published
    # scorer's); `edgebench score --parse` records the mode it scored with here
    parse: str = "lenient"
    prompt: str = "default"  # `--prompt`: the task's own prompt, or its benchmark's (reference)
    # `--delay`/`--cooldown`: seconds of pause before each decoded example but an arm's
    # first; outside every example's timings and the arms' wall_s (ArmRecord.paused_s)
    delay: float = 0.0
    # `--wait-cool`: before the first example, wait until the CPU is below this (°C)
    wait_cool: float | None = None
    wait_cool_timeout: float = 600.0  # `--wait-cool-timeout`: seconds waited at most
    power_command: str | None = None  # `--power-command`: a command printing watts, polled
    power_log: Path | None = None  # `--power-log`: a CSV of time,watts read after the run
    # `--idle-baseline`: seconds of idle power measured before the first arm (0: none)
    idle_baseline: float = 5.0
    timeline: bool = True  # `--timeline/--no-timeline`: sample heat and power once a second
    # `--no-fidelity`: no fidelity phase after the arms (KL and top-1 agreement of the GGUF
    # variants of one model against its highest-precision one, fidelity.json)
    fidelity: bool = True
    # `--retime`: contended (decode each contended example again after its arm, for clean
    # timings) or none (format 2.9)
    retime: str = "contended"
    retime_max: int = DEFAULT_RETIME_MAX  # `--retime-max`: passes at most per contended example


@dataclass(frozen=True)
class ConsistencyPlan(Record):
    """How a consistency run samples: N generations per prompt and temperature."""

    samples_per_prompt: int  # generations per prompt and temperature
    temperatures: list[float]  # sampling temperatures, in run order
    seed: int  # seed of the first generation; generation i uses seed + i
    seeds: list[int]  # every seed used
    sampler: str  # how a token is drawn
    sted_parameters: dict[str, float]  # STED parameters of the comparison


# -- models -------------------------------------------------------------------------
@dataclass(frozen=True)
class PromptFormatRecord(Record):
    """How prompts were rendered for a model."""

    style: str  # `chat` (the model's chat template) or `completion`
    template: str | None = None  # the completion template (completion style)
    chat_template: str | None = None  # the chat template from the model file
    stop: list[str] = field(default_factory=list)  # stop strings the prompt format adds


@dataclass(frozen=True)
class DecodingPlan(Record):
    """How a model's answers are decoded: the token budget and what ends an answer."""

    strategy: Literal["greedy", "sampling"]  # greedy, or seeded sampling (consistency)
    max_tokens: int  # the largest token budget of any example
    max_tokens_rule: str  # how the budgets were set
    # budget per schema (or budget group); None with --max-tokens
    max_tokens_by_schema: dict[str, int] | None
    stop: list[str]  # stop strings (free text only)
    stop_applies_to: str  # which constraint modes the stop strings apply to
    constraints: list[str]  # the run's constraint modes
    keyword_guard: bool  # the keyword guard was on in the schema modes
    skipped_examples: int  # examples not decoded: prompt + budget do not fit the context
    # what else ends or closes an answer; None: made by an edgebench without these policies
    answer_end: AnswerEndPlan | None = None
    # the KV of each schema's shared prompt prefix is kept between its examples, which run
    # one after another: TTFT is warm, as a server with a prompt cache sees it
    prefix_cache: bool = False
    # examples the `+close` arms alone skip: they fit the context only without the closing
    # room (--close-tokens) those arms may add after the budget
    close_skipped_examples: int = 0


@dataclass(frozen=True)
class LoopRuleRecord(Record):
    """Loop detection: the last max(min_tokens, min_repeats x p) tokens repeat with a
    period p of at most max_period tokens."""

    max_period: int  # longest period looked for, in tokens
    min_tokens: int  # shortest repeating stretch that counts
    min_repeats: int  # copies of the period that count


@dataclass(frozen=True)
class AnswerEndPlan(Record):
    """The answer-ending policies of a run besides the model and the token budget."""

    stop_at_json: bool  # free modes (none, json) stop at the first complete JSON value
    stop_at_json_applies_to: list[str]  # the constraint modes it applies to
    loop_detection: LoopRuleRecord | None  # None: off (--no-loop-detection)
    close_arms: list[str]  # arms that close answers cut off by the budget or a loop
    close_tokens: int  # tokens closing may add beyond the budget (n_ctx makes room)


@dataclass(frozen=True)
class MemoryCheck(Record):
    """The memory pre-check: model file plus KV cache against available memory."""

    model_bytes: int  # the model file
    kv_bytes: int | None  # KV cache at n_ctx; None when the model does not say
    n_ctx: int  # the context the KV cache is counted for
    available_bytes: int  # MemAvailable when the run planned
    needed_bytes: int  # model_bytes + kv_bytes
    fits: bool  # needed_bytes <= available_bytes
    enforced: bool  # false with --ignore-memory-check


@dataclass(frozen=True)
class ModelPlan(Record):
    """What every arm of one model shares, decided before the first arm runs."""

    n_ctx: int  # context size every worker of this model loads
    decoding: DecodingPlan  # token budgets and stop strings
    memory_check: MemoryCheck  # the memory pre-check at n_ctx


@dataclass(frozen=True)
class QuantizedFrom(Record):
    """What a variant made by `edgebench models quantize` was made from."""

    source: str  # the source's registry name, path or hf: spec
    source_quantization: str | None = None  # the source file's type (Q4_1, F16 ...)
    requantized: bool = False  # the source was already quantized
    # e.g. "requantized from Q4_1: the ceiling is the source's quality"; None when not
    note: str | None = None
    source_sha256: str | None = None  # of the source file
    quantizer: str | None = None  # "llama-cpp-python 0.3.36" (llama_model_quantize)


@dataclass(frozen=True)
class ModelRecord(Record):
    """One model under test: identity, file, format, and its plan in this run."""

    label: str  # the name results are listed under
    path: str  # model file (GGUF) or converted folder (ONNX)
    sha256: str  # of the GGUF file, or of the ONNX weights
    size_bytes: int  # bytes on disk (file, or the converted folder's weights)
    backend: str  # runtime: llama (llama.cpp) or onnx (onnxruntime)
    format: str  # gguf or onnx
    prompt_format: PromptFormatRecord  # how prompts were rendered for this model
    registry_name: str | None = None  # the registry entry it came from, if any
    architecture: str | None = None  # from the model file (llama, gemma3 ...)
    gguf_name: str | None = None  # `general.name` of the GGUF header
    quantization: str | None = None  # Q4_1, Q4_K_M, int4 ...
    parameters: int | None = None  # parameter count, when the file says
    context_length: int | None = None  # the model's training context
    license: str | None = None  # from the registry entry
    base_model: str | None = None  # Hub repo of the weights
    onnx: dict[str, Any] | None = None  # conversion provenance of an ONNX model
    quantized_from: QuantizedFrom | None = None  # a variant `models quantize` made
    plan: ModelPlan | None = None  # set once the run has planned this model


# -- the task, the dataset (the device: system/records.py) ------------------------
@dataclass(frozen=True)
class TaskRecord(Record):
    name: str  # edgejson, deepjson, roundtrip ...
    prompt_template: str  # the task's prompt template of the style used, verbatim
    metric_family: str  # the metric family that scores the task
    prompt_style: str = "default"  # `--prompt`: default, or reference (the benchmark's own)


@dataclass(frozen=True)
class InvalidDataRow(Record):
    """A dataset row left out: its expected output fails its own schema."""

    id: str  # the example id
    error: str  # the first validation error, "JSON path: message"


@dataclass(frozen=True)
class DatasetSample(Record):
    """`--sample`: the seeded subset the run decodes."""

    n: int  # examples asked for
    stratify: str | None  # the group key they are spread over (None: uniform)
    seed: int  # the sampler's seed
    ids: list[str]  # the chosen examples, in dataset order
    # examples not drawn from: prompt + budget (+ a `+close` arm's room) beyond the context
    # limit (--max-context, --n-ctx or the model's context length) of some model of the run
    n_unfit: int = 0
    unfit_ids: list[str] = field(default_factory=list)  # their ids, in dataset order


@dataclass(frozen=True)
class DatasetRecord(Record):
    """The dataset a run read: where it is, its identity, and what the run took of it."""

    path: str | None = None  # the dataset file
    schemas: str | None = None  # its schema folder (EdgeJSON layout), if any
    sha256: str | None = None  # over the dataset file and every schema file
    file_sha256: str | None = None  # of the dataset file alone, as published (None: a folder)
    # examples in the dataset, rows left out as invalid not counted (the run may take fewer)
    n_examples: int | None = None
    limit: int | None = None  # `--limit`: the run took the first N examples
    n_invalid_data: int = 0  # rows left out because their expected output fails their own schema
    # the rows left out as invalid, each with its first validation error
    invalid_rows: list[InvalidDataRow] = field(default_factory=list)
    sample: DatasetSample | None = None  # `--sample`: the subset the run took


@dataclass(frozen=True)
class GitCommit(Record):
    commit: str  # sha1 of HEAD
    dirty: bool  # uncommitted changes to tracked files


@dataclass(frozen=True)
class FamilyRecord(Record):
    """A metric family as the run used it."""

    role: Literal["task", "extra"]  # the task's own family, or one added by --metrics
    description: str  # what the scores measure
    source: str  # the paper that defines the scores (title and arXiv id)
    scores: list[str]  # per-sample scores
    summary: list[str]  # aggregated figures
    higher_is_better: dict[str, bool]  # figure -> direction
    parameters: dict[str, Any]  # the family's named choices, as the run used them


# -- arms ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CompileRecord(Record):
    """Compiling one constraint (a distinct schema) for an arm."""

    mode: str  # the constraint mode
    key: str  # the grammar's cache key
    label: str  # the schema id
    ok: bool  # the engine accepted the schema
    seconds: float  # first compile
    cached: bool  # served from the worker's in-memory cache
    source: str  # where the grammar text came from
    error: str | None  # why the engine refused it
    warnings: list[str]  # schema keywords the engine reads past
    guarded: list[str]  # keywords the keyword guard enforces
    cached_seconds: float | None  # the same schema again (cached)


@dataclass(frozen=True)
class MemoryRecord(Record):
    """Peak resident memory of an arm's worker processes, in MiB (2^20 bytes)."""

    # total resident memory (VmHWM where readable); the `_mb` names hold MiB: they
    # predate the label and stay for the format's sake
    peak_rss_mb: float
    peak_rss_anon_mb: float | None  # anonymous pages: weights copied to RAM, KV cache, heap
    peak_rss_file_mb: float | None  # file-backed pages: the mmapped model file
    samples: int  # readings taken
    source: str  # proc (/proc/PID/status, VmHWM exact), psutil or none


@dataclass(frozen=True)
class WorkerFailure(Record):
    """An example whose worker died, timed out or raised."""

    index: int  # the example's position in the run
    id: str  # the example id
    kind: str  # crashed, timeout or error
    error: str  # one line: what happened and where


@dataclass(frozen=True)
class ArmRecord(Record):
    """One model under one constraint mode, decoded in its own worker process(es)."""

    model: str  # the model's label
    # the constraint mode: none, json, gbnf, outlines, mask or xgrammar (constraints/spec.py's
    # MODES), or a closing arm such as mask+close
    constraint: str
    status: ArmStatus  # how the arm ended (skipped: its runtime cannot apply the mode)
    skip_reason: str | None = None  # why the runtime cannot apply the mode
    error: str | None = None  # what stopped the arm
    # the engine that enforced the mode: llguidance, llama.cpp GBNF, "-" for none
    # (runtimes.py's declaration when the arm ran; None: a skipped arm, or before 2.10)
    engine: str | None = None
    n_ctx: int | None = None  # the context the worker loaded
    load_s: float | None = None  # first model load
    reload_s: list[float] = field(default_factory=list)  # loads of replacement workers
    runtime: dict[str, Any] | None = None  # what the backend reported at load
    compile: list[CompileRecord] = field(default_factory=list)  # first session's compiles
    memory: MemoryRecord | None = None  # peak resident memory over the arm's workers
    restarts: int = 0  # fresh workers started after a crash or timeout
    # jobs lost to a crash, timeout or backend error
    worker_failures: list[WorkerFailure] = field(default_factory=list)
    warmup_error: str | None = None  # a warm-up that failed (the arm went on without it)
    wall_s: float = 0.0  # wall clock of the arm, every session, its pauses left out
    paused_s: float = 0.0  # seconds of `--delay` pauses between its examples, every session

    @property
    def key(self) -> str:
        return arm_key(self.model, self.constraint)


def arm_key(model: str, constraint: str) -> str:
    """How an arm is named in messages and tables: "<model> | <mode>"."""
    return f"{model} | {constraint}"


@dataclass(frozen=True)
class ResumeRecord(Record):
    """One `--resume` of the run."""

    at: str  # UTC, ISO 8601
    command: list[str]  # argv of the resuming command
    previous_status: RunStatus  # the status the run had
    samples_kept: int  # records kept from earlier sessions
    torn_line_dropped: bool  # a last line cut by a crash was dropped
    worker_failures_retried: int  # crashed or timed-out jobs run again
    duplicates_dropped: int  # records of a job already kept
    stale_lock: dict[str, Any] | None = None  # the lock's holder, if it died


@dataclass(frozen=True)
class WaitCool(Record):
    """`--wait-cool`: waiting before the start until the CPU is below a temperature."""

    target_c: float  # the temperature asked for (°C)
    timeout_s: float  # the longest wait (`--wait-cool-timeout`)
    # cooled (was above, went below), already (below at once), timeout (still above when
    # the time was up: started anyway) or unreadable (no CPU temperature: started at once)
    outcome: Literal["cooled", "already", "timeout", "unreadable"]
    waited_s: float  # seconds waited
    start_c: float | None  # the first reading (None: unreadable)
    end_c: float | None  # the last reading
    sensor: str | None  # where it was read: "thermal_zone0 (x86_pkg_temp)", a hwmon chip
    message: str  # the line printed about it


@dataclass(frozen=True)
class RescoreRecord(Record):
    """One `edgebench score` of the run."""

    at: str  # UTC, ISO 8601
    edgebench: str  # the edgebench version that scored
    git: GitCommit | None  # its commit
    families: list[str]  # the families it scored with
    parse: str = "lenient"  # the extraction mode it scored with (`--parse`)


@dataclass(frozen=True)
class Manifest(Record):
    """manifest.json: what ran, on what, with what, and how each arm went."""

    schema_version: str  # the run-folder format, major.minor
    kind: RunKind  # run (`edgebench run`) or consistency (`edgebench consistency`)
    run_id: str  # the run folder's name
    status: RunStatus  # running while a session writes; what stopped it otherwise
    started_at: str  # UTC, ISO 8601
    command: list[str]  # argv of the command that made the run
    settings: RunSettings  # the options the run was made with
    models: list[ModelRecord]  # every model of the run, in run order
    task: TaskRecord  # the task and the prompt it asks
    dataset: DatasetRecord  # the dataset file and its identity
    device: Device  # the machine the run measured
    packages: dict[str, str | None]  # versions of edgebench and its runtimes
    git: GitCommit | None  # edgebench's commit, when run from a checkout
    families: dict[str, FamilyRecord]  # metric families, the task's first
    arms: list[ArmRecord]  # one per (model, constraint mode), in run order
    consistency: ConsistencyPlan | None  # the sampling plan of a consistency run
    finished_at: str | None = None  # UTC, ISO 8601, when the last session ended
    wall_s: float | None = None  # wall clock of every session of the run
    error: str | None = None  # what stopped the run
    # the command that continues a run that did not complete (`--resume`)
    resume_with: str | None = None
    resumes: list[ResumeRecord] = field(default_factory=list)  # one record per --resume
    rescored: list[RescoreRecord] = field(default_factory=list)  # one record per `edgebench score`
    # `--wait-cool`: how each session (the first, then each --resume) waited to start
    wait_cool: list[WaitCool] = field(default_factory=list)
    # where the run's power came from and its idle baseline (format 2.7; None before)
    power: PowerRecord | None = None

    def model(self, label: str) -> ModelRecord:
        return next(m for m in self.models if m.label == label)

    def arm(self, model: str, constraint: str) -> ArmRecord | None:
        return next((a for a in self.arms if (a.model, a.constraint) == (model, constraint)), None)

    @property
    def task_family(self) -> str:
        return self.task.metric_family


# -- samples ------------------------------------------------------------------------
@dataclass(frozen=True)
class Sampling(Record):
    """The draw of one sampled generation (consistency runs)."""

    temperature: float  # sampling temperature
    seed: int  # the draw's seed
    sample: int  # generation number for this prompt and temperature, from 0


# (example id, temperature, seed): one job of an arm; temperature and seed None when greedy
JobKey = tuple[str, float | None, int | None]


def job_key(example_id: str, sampling: Sampling | None) -> JobKey:
    """The key of one job in an arm, shared by the job and its sample record."""
    if sampling is None:
        return (example_id, None, None)
    return (example_id, sampling.temperature, sampling.seed)


@dataclass(frozen=True)
class ParseStep(Record):
    """Extracting one JSON value from the raw output."""

    ok: bool  # a JSON value was found
    # lenient: whole, fenced_json, fenced, first_value (raw_decode before format 2.2);
    # reference: whole, fenced_json, before_fence, brace_regex; none when nothing parsed
    path: str
    error: str | None  # why not


@dataclass(frozen=True)
class Timings(Record):
    """Speed of one answer, from the backend's raw timestamps (one formula for all)."""

    ttft_s: float | None  # time to first token: tokenization and prefill
    latency_s: float  # request to last token
    prefill_tok_s: float | None  # prompt tokens / TTFT
    decode_tok_s: float | None  # tokens after the first sampled one, per second


@dataclass(frozen=True)
class CpuUse(Record):
    """Who had the CPU while one example decoded (format 2.9).

    Shares of all cores' time in the interval (system/cpu_share.py); the example is
    contended when either share is over its CONTENDED_SHARE. None: not measurable (no
    tick passed)."""

    others_share: float | None  # busy time of other processes (not the run's, not the worker's)
    steal_share: float | None  # time the hypervisor gave to other virtual machines
    worker_cpu_s: float | None  # CPU seconds the model's worker used

    @property
    def contended(self) -> bool:
        return contended(self.others_share, self.steal_share)


@dataclass(frozen=True)
class PhaseTimes(Record):
    """One decode-loop phase over one answer (MaskBench's time between masks, per call):
    mask (the grammar engine's allowed tokens), apply (the allowed tokens' logits and the
    best of them), guard (the keyword guard), advance (the engine taking the chosen
    token), forced (the engine finding and taking its forced tokens), sample (a
    runtime's own sampler chain) or decode (the model's forward pass, llama_decode)."""

    calls: int  # times the phase ran (decode: forward passes after the prompt)
    total_ms: float  # all of them
    p50_us: float  # median call
    p99_us: float  # 99th percentile call (linear interpolation)


@dataclass(frozen=True)
class SampleRecord(Record):
    """One line of samples.jsonl: one example decoded by one arm (one draw, when sampling).

    Exactly one record per (arm, example[, sampling]) whatever happened: decoded and
    scored, refused by the constraint engine (`unsupported`), too long for the context
    (`skipped`: not decoded, never scored), or lost with its worker (`crashed`,
    `timeout`: `--resume` runs those again). The file is append-only: an example re-timed
    after its arm (`--retime`) gets a second, complete line with `passes` > 1 that
    supersedes its first; readers (`runfolder.read.read_samples`) keep that one, in the
    first line's place."""

    index: int  # the example's position among the run's examples
    id: str  # the example id
    model: str  # the arm's model
    constraint: str  # the arm's constraint mode
    sampling: Sampling | None  # None: greedy
    schema_id: str  # the example's schema
    groups: dict[str, str]  # labels results are broken down by
    constraint_status: ConstraintStatus  # none, applied or unsupported
    constraint_warnings: list[str]  # schema keywords the engine reads past (output may break them)
    constraint_guarded: list[str]  # keywords the keyword guard enforced
    prompt: str  # exactly what the model read
    raw_output: str  # the model's text, verbatim
    expected: Any  # the example's answer
    parse: ParseStep | None  # None: not scored (skipped)
    parsed: Any  # the extracted JSON value
    # family -> score -> value; None: not scored (skipped)
    scores: dict[str, dict[str, Number]] | None
    # family -> what explains its scores (schema errors, per element type)
    score_details: dict[str, dict[str, Any]]
    # stop, json_complete, loop, length, unsupported, skipped, crashed, timeout or error
    finish_reason: FinishReason
    hit_token_limit: bool  # the answer was cut at max_tokens
    max_tokens: int | None  # the token budget of this example
    prompt_tokens: int  # tokens of the prompt
    output_tokens: int  # tokens of raw_output
    generated_tokens: int  # tokens sampled, an end-of-turn token included
    forced_tokens: int  # tokens a grammar forced without sampling
    forced_prefix_tokens: int  # forced tokens evaluated with the prompt
    forward_passes: int | None  # llama_decode calls after the prompt, where counted
    guard_vetoes: int  # candidate tokens the keyword guard struck out
    guard_dead_ends: int  # times the guard had to give way
    timings: Timings  # speed of this answer
    runtime_counters: dict[str, Number]  # the runtime's own counters, for cross-checks
    error: str | None  # why nothing (or a failed score) was recorded
    # output tokens until the first top-level JSON value was complete; None: never
    answer_tokens: int | None = None
    # output tokens after that point (0 when the answer stopped there); None: never complete
    tokens_after_answer: int | None = None
    closed: bool = False  # a `+close` arm closed this cut-off answer (raw_output is closed)
    unclosed_output: str | None = None  # the text before closing, when closing added any
    closing_tokens: int = 0  # tokens the closing added
    # prompt tokens whose KV a prefix cache kept from an earlier example (--prefix-cache)
    cached_prompt_tokens: int = 0
    # the schema engine on this example's schema: compiled, refused (the engine's error),
    # or crashed (compiling killed or hung the worker); None: no schema constraint
    compile_outcome: CompileOutcome | None = None
    # time per decode-loop phase (PhaseTimes) where the runtime times them; empty before
    # format 2.6 and for runtimes that do not
    step_times: dict[str, PhaseTimes] = field(default_factory=dict)
    # start, first token and end on the wall clock (format 2.7; None: before, or not decoded)
    wall: WallClock | None = None
    # who had the CPU during the pass `timings` come from (format 2.9; None: before, or not
    # decoded)
    cpu: CpuUse | None = None
    # times this example was decoded: 1, or more when it was re-timed (`--retime`). A line
    # with passes > 1 supersedes the earlier line of its (arm, example, draw): readers
    # take it as final, in the earlier line's place
    passes: int = 1
    # the timings of the passes disturbed by contention, in order, other than the one in
    # `timings` (a clean re-timed pass's; the first pass's when no pass was clean)
    timings_disturbed: list[Timings] = field(default_factory=list)
    cpu_disturbed: list[CpuUse] = field(default_factory=list)  # their `cpu`, in that order
    # a re-timed pass's output differed from the first pass's byte for byte: re-timing
    # stopped there and the first pass's timings were kept
    retime_mismatch: bool = False

    @property
    def contended(self) -> bool:
        """Its timings were taken while others had more than CONTENDED_SHARE of the CPU."""
        return self.cpu is not None and self.cpu.contended

    @property
    def supersedes(self) -> bool:
        """This line replaces the earlier line of its job (a re-timed example)."""
        return self.passes > 1

    @property
    def job_key(self) -> JobKey:
        """What makes a record unique in its arm: example and draw."""
        return job_key(self.id, self.sampling)

    @property
    def key(self) -> tuple[str, str, str, float | None, int | None]:
        """What makes a record unique in a run: arm, example and draw."""
        return (self.model, self.constraint, *self.job_key)

    @property
    def skipped(self) -> bool:
        return self.finish_reason == "skipped"

    @property
    def worker_failure(self) -> bool:
        """Never answered (crashed, timeout): `--resume` runs it again."""
        return self.finish_reason in ("crashed", "timeout")


# -- the summary --------------------------------------------------------------------
@dataclass(frozen=True)
class Distribution(Record):
    """p50, p95 (linear interpolation) and mean over examples; None when nothing measured."""

    p50: float | None  # median
    p95: float | None  # 95th percentile
    mean: float | None  # mean
    n: int  # examples measured


@dataclass(frozen=True)
class PhaseSummary(Record):
    """One decode-loop phase over an arm's answers (see PhaseTimes)."""

    calls: int  # over the arm
    mean_us: float  # all calls' time / calls
    p50_us: float  # median over answers of each answer's p50
    p99_us: float  # median over answers of each answer's p99
    samples: int  # answers that timed the phase


@dataclass(frozen=True)
class Perf(Record):
    """Speed, memory and token totals of one arm."""

    load_s: float | None  # first model load
    peak_rss_mb: float | None  # peak resident memory of the arm's worker, MiB (2^20 bytes)
    peak_rss_anon_mb: float | None  # its anonymous part
    peak_rss_file_mb: float | None  # its file-backed part
    ttft_s: Distribution  # time to first token
    latency_s: Distribution  # request to last token
    prefill_tok_s: Distribution  # prompt tokens per second
    decode_tok_s: Distribution  # generated tokens per second after the first
    prompt_tokens_total: int  # over the arm
    output_tokens_total: int  # over the arm
    generated_tokens_total: int  # over the arm
    forced_tokens_total: int  # over the arm
    finish_reasons: dict[str, int]  # finish reason -> examples
    hit_token_limit: int  # answers cut at max_tokens
    wall_s: float | None  # wall clock of the arm
    loops: int = 0  # answers ended by loop detection
    stopped_at_json: int = 0  # answers ended at their first complete JSON value
    tokens_after_answer_total: int = 0  # output tokens after the first complete JSON value
    closed: int = 0  # cut-off answers a `+close` arm closed into a whole value
    closing_tokens_total: int = 0  # tokens the closing added
    ttft_warm: bool = False  # TTFT with a prefix cache (--prefix-cache)
    cached_prompt_tokens_total: int = 0  # prompt tokens the prefix cache served
    # decode-loop phase -> its time per call over the arm (format 2.6; empty when untimed)
    step_times: dict[str, PhaseSummary] = field(default_factory=dict)
    # timed examples whose timings are still contended after re-timing (format 2.9)
    contended_examples: int = 0
    # every timed example's CPU was measured and none is left contended; None: contention
    # not measured (a run before 2.9) or nothing timed, which is not clean: `card`
    # publishes no speed of such an arm unless told to
    speed_clean: bool | None = None
    # figure (ttft_s, latency_s, prefill_tok_s, decode_tok_s) -> the 95% bootstrap
    # interval [lo, hi] of its p50 over the arm's timed examples (summary `bootstrap`);
    # None: no value (format 2.9; empty before)
    p50_ci95: dict[str, list[float] | None] = field(default_factory=dict)
    # the paired interval of `decode_ratio_to_none` (p50 decode tok/s over the same
    # model's `none` arm's), both arms resampled on the examples they share; None: no
    # `none` arm, this is it, or no shared timed example (format 2.9)
    decode_ratio_to_none_ci95: list[float] | None = None


@dataclass(frozen=True)
class CompileSummary(Record):
    """Grammar compile times per distinct schema: the first compile and the cached one."""

    schemas: int  # distinct schemas compiled
    unsupported: int  # schemas the engine refused
    first_s: Distribution  # first compile per schema
    cached_s: Distribution  # the same schema again
    first_total_s: float  # all first compiles
    sources: dict[str, int]  # where grammars came from -> schemas
    errors: dict[str, str | None]  # schema -> why refused
    schemas_with_unenforced_keywords: int  # schemas with keywords the engine reads past
    # An engine that compiles the grammar again inside every answer (OpenVINO GenAI's
    # XGrammar): each answer's own compile, its runtime counter `grammar_compile_ms`
    # (format 2.11; None: no answer recorded one, the engine reuses its compile).
    per_answer_s: Distribution | None = None


@dataclass(frozen=True)
class Coverage(Record):
    """How a schema engine fared on the schemas of a set of examples (JSONSchemaBench's
    coverage): every example (skipped ones excluded) is compiled, refused or crashed."""

    n: int  # examples whose schema the engine was given
    compiled: int  # the engine compiled the schema
    refused: int  # the engine refused it (reasons in `refusals`)
    crashed: int  # compiling it raised, killed the worker or outlived --compile-timeout
    compile_s: Distribution  # first compile of each distinct schema that compiled
    refusals: dict[str, int]  # the engine's reason (one line, cut) -> examples
    lost: int  # compiled, but the worker died or timed out decoding
    # share of compiled examples whose output passed the task's schema score
    compliant_when_compiled: float | None


@dataclass(frozen=True)
class CoverageSummary(Record):
    """Coverage of an arm's schema engine, overall and per group of examples."""

    overall: Coverage  # every example of the arm
    groups: dict[str, dict[str, Coverage]]  # group (subset ...) -> value -> coverage
    # the task family's schema score that `compliant_when_compiled` counts (schema_compliance,
    # deepjson's syntax ...); None: the task has none
    score: str | None = None


@dataclass(frozen=True)
class GuardSummary(Record):
    """What the keyword guard did."""

    samples_guarded: int  # samples whose schema the guard watched
    vetoes: int  # candidate tokens struck out
    dead_ends: int  # times every allowed token was refused


Figures = dict[str, Number | None]


@dataclass(frozen=True)
class FamilySummary(Record):
    """One metric family over an arm: overall and per group of examples."""

    role: Literal["task", "extra"]  # task: the task's own family; extra: added with --metrics
    higher_is_better: dict[str, bool]  # figure -> direction
    parameters: dict[str, Any]  # the family's parameters
    overall: Figures  # the family's figures over the scored examples, with `n`
    # group (complexity, schema, depth, element_type ...) -> value -> figures
    groups: dict[str, dict[str, Figures]]
    # figure -> its 95% bootstrap interval [lo, hi] over the examples (summary `bootstrap`);
    # None: no value. Figures that are not rates (counts, `n`) have none.
    ci95: dict[str, list[float] | None] = field(default_factory=dict)
    # group -> value -> figure -> interval, as `ci95` for the examples of that group
    groups_ci95: dict[str, dict[str, dict[str, list[float] | None]]] = field(default_factory=dict)


@dataclass(frozen=True)
class ArmSummary(Record):
    """Every figure of one arm (model x constraint mode)."""

    model: str  # the model's label
    constraint: str  # the constraint mode
    status: ArmStatus  # how the arm ended
    skip_reason: str | None  # why the runtime cannot apply the mode
    n_examples: int  # records of the arm (skipped ones included)
    n_errors: int  # records with an error (not skipped)
    n_unsupported: int  # examples whose schema the engine refused
    n_crashed: int  # examples lost to a worker crash
    n_timeout: int  # examples that outlived --timeout
    n_skipped: int  # examples too long for the context limit (not scored)
    families: dict[str, FamilySummary]  # the task's family first
    # why outputs failed the task's schema score (None: the task has none)
    noncompliant: dict[str, int] | None
    perf: Perf  # speed, memory and token totals
    compile: CompileSummary  # grammar compile times
    guard: GuardSummary  # what the keyword guard did
    model_size_mb: float | None  # the model on disk, MB (10^6 bytes)
    decode_ratio_to_none: float | None  # p50 decode tok/s over that of `none`, same model
    decode_ratio_to_first_model: float | None  # p50 decode tok/s over the first model's, same mode
    # schemas compiled, refused and crashed per group; None: the arm has no schema engine
    coverage: CoverageSummary | None = None
    # a consistency run's arm at one sampling temperature (`consistency.arms`); None: greedy
    temperature: float | None = None
    energy: ArmEnergy | None = None  # joules of the arm (format 2.7; None: before)
    # throttling (Pi bits, or a core's frequency under its maximum) seen in the timeline
    # while the arm decoded; None: no timeline
    throttled_during_run: bool | None = None
    # the runtime as runs record it (the model's `backend`: llama, onnx) and its version
    # in the arm's runtime block (None: not loaded); format 2.10
    runtime: str | None = None
    runtime_version: str | None = None
    # the engine that enforced the mode (the arm's record, else the runtime's declaration
    # for the mode; "-" for none; None: skipped, or a runtime not known here) and its
    # version where the backend records it; format 2.10
    engine: str | None = None
    engine_version: str | None = None

    @property
    def key(self) -> str:
        return arm_key(self.model, self.constraint)

    @property
    def n_scored(self) -> int:
        """Records scored: every figure's `n` (skipped examples were never decoded)."""
        return self.n_examples - self.n_skipped

    @property
    def task(self) -> FamilySummary | None:
        """The task's own family (None for an arm that never ran)."""
        return next((f for f in self.families.values() if f.role == "task"), None)

    @property
    def metrics(self) -> Figures:
        """The task's own figures over the arm (empty for an arm that never ran)."""
        task = self.task
        return task.overall if task is not None else {}

    @property
    def groups(self) -> dict[str, dict[str, Figures]]:
        """The task's own figures per group of examples (empty for an arm that never ran)."""
        task = self.task
        return task.groups if task is not None else {}


@dataclass(frozen=True)
class PromptConsistency(Record):
    """How much the N answers to one prompt at one temperature agree."""

    n: int  # generations
    valid_json: int  # generations that parsed
    consistency: float | None  # mean(s) * exp(-k * sigma / 0.5) over pairwise hybrid STED
    consistency_structural: float | None  # the same with structure-only STED
    consistency_semantic: float | None  # the same with values-only STED
    sted_mean: float | None  # mean pairwise similarity
    sted_std: float | None  # its standard deviation


@dataclass(frozen=True)
class TemperatureConsistency(Record):
    """Consistency at one temperature: means over prompts, and the task's figures of all
    generations."""

    n_prompts: int  # prompts compared
    n_generations: int  # generations at this temperature
    consistency: float | None  # mean of the prompts' consistency scores (hybrid STED)
    consistency_structural: float | None  # the same with structure-only STED
    consistency_semantic: float | None  # the same with values-only STED
    sted_mean: float | None  # mean pairwise STED similarity
    sted_std: float | None  # mean of the prompts' standard deviations
    task_metrics: Figures  # the task's figures over every generation


@dataclass(frozen=True)
class ConsistencySummary(Record):
    """What a consistency run adds: STED between the samples of each prompt."""

    samples_per_prompt: int  # generations per prompt and temperature
    temperatures: list[float]  # in run order
    seeds: list[int]  # every seed used
    parameters: dict[str, float]  # STED parameters
    higher_is_better: dict[str, bool]  # figure -> direction
    by_temperature: dict[str, TemperatureConsistency]  # temperature -> means over prompts
    by_prompt: dict[str, dict[str, PromptConsistency]]  # temperature -> example id -> ...
    # every arm at each temperature, as `arms` are for a greedy run (every family over
    # that temperature's generations, speed, memory), plus the family `consistency`: the
    # consistency scores over prompts with intervals (empty: before 2.5)
    arms: list[ArmSummary] = field(default_factory=list)


@dataclass(frozen=True)
class BootstrapRecord(Record):
    """How the intervals were drawn (edgebench/summary/uncertainty.py, docs/metrics.md)."""

    method: str  # percentile bootstrap over examples; paired over example ids for differences
    resamples: int  # resamples of the examples
    seed: int  # numpy default_rng seed
    level: float  # 0.95
    indicative_below_n: int  # fewer examples than this: figures are indicative only


@dataclass(frozen=True)
class PairedDifference(Record):
    """One figure of arm `other` minus the same figure of arm `base` over the examples both
    scored, with its paired 95% bootstrap interval: the same model in two constraint modes,
    or the same mode with two models."""

    family: str  # the metric family
    metric: str  # the figure
    base_model: str
    base_constraint: str
    other_model: str
    other_constraint: str
    n: int  # examples both arms scored
    difference: float  # other - base over those examples
    ci95: list[float]  # [lo, hi]

    @property
    def label(self) -> str:
        """ "mask − none" for two modes of one model, "b − a" for two models."""
        if self.base_model == self.other_model:
            return f"{self.other_constraint} − {self.base_constraint}"
        return f"{self.other_model} − {self.base_model}"


@dataclass(frozen=True)
class Summary(Record):
    """summary.json: derived from manifest.json and samples.jsonl, never kept by hand."""

    schema_version: str  # the run-folder format, major.minor
    kind: RunKind  # run or consistency
    run_id: str  # the run folder's name
    task: str  # the task's name
    task_family: str  # the metric family whose figures are the task's own
    status: RunStatus  # the run's status
    models: list[str]  # model labels, in run order
    constraints: list[str]  # constraint modes, in run order
    arms: list[ArmSummary]  # one per (model, constraint mode), in run order
    consistency: ConsistencySummary | None  # consistency runs
    parse: str = "lenient"  # how the JSON was taken from the answers (settings.parse)
    # dataset rows left out because their ground truth fails their own schema
    n_invalid_data: int = 0
    prompt_style: str = "default"  # the task's prompt style (`--prompt`)
    bootstrap: BootstrapRecord | None = None  # how the intervals were drawn (None: before 2.4)
    # the task's figures, arm minus arm on the same examples (paired intervals)
    differences: list[PairedDifference] = field(default_factory=list)
    # throttling seen anywhere in the run's timeline (format 2.7; None: no timeline)
    throttled_during_run: bool | None = None

    def arm(self, model: str, constraint: str) -> ArmSummary | None:
        return next((a for a in self.arms if (a.model, a.constraint) == (model, constraint)), None)


# -- edgebench bench ------------------------------------------------------------------
@dataclass(frozen=True)
class BenchModel(Record):
    """One model `edgebench bench` measured: the manifest's ModelRecord less prompt and plan.

    Bench sends no prompt, so it has no prompt format.
    `gguf_name`, `license`, `base_model`, `onnx` and `quantized_from` were always written;
    the schema lists them since bench.json is built as a `BenchRecord` (format 2.9)."""

    label: str  # the name its rows are listed under
    path: str  # model file (GGUF) or converted folder (ONNX)
    sha256: str  # of the GGUF file, or of the ONNX weights
    size_bytes: int  # bytes on disk
    backend: str  # runtime: llama (llama.cpp) or onnx (onnxruntime)
    format: str = "gguf"  # gguf or onnx
    registry_name: str | None = None  # the registry entry it came from, if any
    architecture: str | None = None  # from the model file
    gguf_name: str | None = None  # `general.name` of the GGUF header
    quantization: str | None = None  # Q4_1, Q4_K_M, int4 ... (GGUF header, ONNX provenance)
    parameters: int | None = None  # parameter count, when the file says
    context_length: int | None = None  # the model's training context
    license: str | None = None  # from the registry entry
    base_model: str | None = None  # Hub repo of the weights
    onnx: dict[str, Any] | None = None  # conversion provenance of an ONNX model
    quantized_from: QuantizedFrom | None = None  # a variant `models quantize` made


@dataclass(frozen=True)
class BenchWorker(Record):
    """One worker process: one model at one thread count."""

    threads: int  # llama.cpp threads
    status: WorkerStatus  # completed, stopped (another worker failed), interrupted, failed, crashed
    model: str | None = None  # the model's label (None: format 1, one model per file)
    n_ctx: int | None = None  # context size it loaded
    load_s: float | None = None  # seconds the load took
    runtime: dict[str, Any] | None = None  # the runtime's own facts (model_size_bytes ...)
    memory: MemoryRecord | None = None  # its peak resident memory
    wall_s: float | None = None  # seconds from start to close
    thermal_after: dict[str, Any] | None = None  # temperature and throttling when it closed


@dataclass(frozen=True)
class BenchRow(Record):
    """One test of one model at one thread count, complete on its own (the rows of
    `--format json|csv|md` are these)."""

    threads: int  # llama.cpp threads
    test: str  # ppN, tgN, with " @ dD" after D tokens of KV cache
    kind: str  # pp (prompt processing, one batch) or tg (generation, one token at a time)
    n_tokens: int  # tokens timed per repetition
    depth: int  # tokens already in the KV cache, untimed
    repetitions: int  # timed repetitions
    tok_s_mean: float | None  # tokens per second, mean over the repetitions
    tok_s_std: float | None  # sample standard deviation (None: one repetition)
    tok_s_cv: float | None  # std / mean
    tok_s_median: float | None = None  # median tokens per second
    tok_s_min: float | None = None  # slowest repetition
    tok_s_max: float | None = None  # fastest repetition
    # the most CPU other processes (steal: other virtual machines) took in one repetition
    cpu_others_max: float | None = None
    cpu_steal_max: float | None = None
    seconds: list[float] = field(default_factory=list)  # each repetition's duration
    tok_s: list[float] = field(default_factory=list)  # each repetition's tokens per second
    cpu_others: list[float | None] = field(default_factory=list)  # per repetition
    cpu_steal: list[float | None] = field(default_factory=list)  # per repetition
    peak_rss_mb: float | None = None  # peak resident memory of the worker that ran it
    model: str | None = None  # the model's label (None: format 1, see BenchRecord.model)
    quantization: str | None = None  # the model's quantization (GGUF header, ONNX provenance)
    backend: str | None = None  # the runtime as it names itself (llama.cpp ...), else llama, onnx
    # the weights' size: llama.cpp's tensor bytes (as llama-bench shows) else the file's
    size_bytes: int | None = None
    parameters: int | None = None  # parameter count, when the file says
    device: str | None = None  # the device in one line: board, CPU, cores, RAM, OS, runtime
    # unix seconds (the parent's wall clock) around each timed repetition's call to the
    # worker (its KV clear and untimed depth fill inside); `--cooldown` pauses fall
    # between them, never inside
    t_start: list[float] = field(default_factory=list)
    t_end: list[float] = field(default_factory=list)
    # `--duration` rows: mean tokens/s of the repetitions whose midpoint falls in the
    # row's first minute and in its last (from its first start to its last end); the
    # drop is (first - last) / first in %, positive when it slowed down
    first_minute_tok_s: float | None = None
    last_minute_tok_s: float | None = None
    drop_pct: float | None = None
    span_s: float | None = None  # the row's first start to its last end
    # seconds the two minutes share (span under 2 minutes); when both hold the same
    # repetitions (a span under one minute) there is one window only: no drop (None)
    overlap_s: float | None = None


@dataclass(frozen=True)
class BenchRecord(Record):
    """The JSON file `edgebench bench` writes (runs/<time>-<model>-bench.json): every
    model, worker and row; rewritten after each group of workers, so a stop keeps what
    was measured."""

    kind: Literal["edgebench-bench"]  # what the file is
    status: RunStatus  # running, completed, interrupted, failed, crashed
    started_at: str  # UTC, ISO 8601
    # the options: threads, prompt/gen tokens, depths, repetitions ...; `timing`, when a
    # model's runtime times its own rows (OpenVINO GenAI): runtime -> how it was timed
    settings: dict[str, Any]
    device: Device  # the machine (`threads_used`: the first thread count)
    # the bench file's own version: 1 had one model (`model`), 2 lists `models`
    format: int = 2
    schema_version: str | None = None  # the record format it follows (None: before 2.5)
    finished_at: str | None = None  # UTC, once it ended
    error: str | None = None  # what ended it early, in one line
    command: list[str] = field(default_factory=list)  # the command line
    models: list[BenchModel] = field(default_factory=list)  # in the order measured
    model: BenchModel | None = None  # format 1: the one model
    packages: dict[str, Any] = field(default_factory=dict)  # package versions
    git: GitCommit | None = None  # edgebench's commit, from a checkout
    workers: list[BenchWorker] = field(default_factory=list)  # one per model and thread count
    results: list[BenchRow] = field(default_factory=list)  # rows with a timed repetition
    wait_cool: WaitCool | None = None  # `--wait-cool`: how the bench waited to start


# -- power and heat (format 2.7) ----------------------------------------------------
@dataclass(frozen=True)
class PowerRecord(Record):
    """The run's power source (`edgebench.system.power`) and its idle baseline. Energy
    is derived from it with the timeline (or the copied --power-log) in the summary."""

    source: str | None  # rapl, pi5-pmic, battery:BAT0, hwmon:<chip>, command, log; None: none
    tier: str | None  # board-pmic, rapl, battery, hwmon or external
    resolution: str | None  # what one reading resolves
    covers: str | None  # what the source measures and what it misses
    reason: str | None  # why there is no energy (no source readable, --no-timeline ...)
    timeline: bool  # heat and power sampled into timeline.jsonl
    interval_s: float  # seconds between timeline rows
    # the idle baseline's window on the wall clock (unix s), model not running; None: none
    idle_start: float | None = None
    idle_end: float | None = None


@dataclass(frozen=True)
class TimelineRow(Record):
    """One line of timeline.jsonl: the machine once a second during the run."""

    t: float  # unix seconds (time.time)
    temp_c: float | None  # CPU temperature
    freq_mhz: list[int | None]  # current frequency per core
    throttled: dict[str, Any] | None  # the Raspberry Pi's decoded get_throttled bits
    watts: float | None = None  # instantaneous power, when the source gives it
    joules: float | None = None  # cumulative energy, when the source counts it
    arm: str | None = None  # the arm decoding ("<model> | <mode>"); None: between arms, idle
    example: str | None = None  # the example being decoded
    # CPU shares since the previous row as a sample's `cpu` defines them, the run's
    # processes (this one and its workers) counted as ours (format 2.9)
    others_share: float | None = None
    steal_share: float | None = None  # stolen by the hypervisor since the previous row
    # why this row's power reading was lost (the meter failed, hung, printed garbage);
    # None: read, or no source (format 2.9)
    lost: str | None = None


@dataclass(frozen=True)
class PowerReading(Record):
    """One line of power-log.jsonl: a --power-log row copied into the run folder."""

    t: float  # unix seconds
    watts: float | None  # instantaneous power
    joules: float | None = None  # cumulative energy
    # lines of the log that could not be read, after the row at `t` (before the first
    # row: at it): why, and how many (watts None); format 2.9
    lost: str | None = None
    lost_count: int = 0


@dataclass(frozen=True)
class WallClock(Record):
    """An example's request start, first token and end on the wall clock (unix s): the
    end is when the answer reached the run, the others the backend's own durations back
    from it. Energy is split at the first token into prefill and decode."""

    start: float  # request start
    first_token: float | None  # first sampled token; None: none
    end: float  # last token


@dataclass(frozen=True)
class ArmEnergy(Record):
    """Energy of one arm's decoded examples, idle power subtracted; every figure None
    (with `reason`) when no power source covered them. Never guessed."""

    source: str | None  # the power source (PowerRecord.source)
    tier: str | None  # its tier
    resolution: str | None  # what one reading resolves
    idle_watts: float | None  # the idle baseline subtracted (None: not measured)
    idle_seconds: float | None  # how long it was measured
    j_per_prefill_token: float | None  # prefill energy / prompt tokens evaluated
    j_per_decode_token: float | None  # decode energy / tokens after the first
    j_per_answer: float | None  # energy / decoded answers
    j_per_compliant_answer: float | None  # energy / answers passing the schema score
    j_per_exact_answer: float | None  # energy / answers equal to the expected one
    total_j: float | None  # energy of the examples measured
    reason: str | None  # why figures are None
    prefill_j: float | None = None  # energy from request start to first token
    decode_j: float | None = None  # energy from first token to end
    n_measured: int = 0  # examples whose whole interval the readings cover
    # power readings lost while the arm decoded (a meter that failed, hung or printed
    # garbage; log lines that could not be read), by reason (format 2.9)
    readings_lost: int = 0
    lost_reasons: dict[str, int] = field(default_factory=dict)
    # the figures rest on the readings that remain: what was lost, in one line; None: none
    partial: str | None = None


# -- fidelity.json --------------------------------------------------------------------
@dataclass(frozen=True)
class FidelityVariant(Record):
    """One variant against its reference, over the same examples and positions: the
    next-token distributions with the same tokens read (teacher forcing)."""

    quantization: str | None  # the variant's type (Q4_K_M ...)
    kl_mean: float | None  # mean KL(reference || variant) per position, nats
    kl_median: float | None  # median over positions, nats
    kl_p99: float | None  # 99th percentile over positions, nats
    top1_agreement: float | None  # share of positions where both models' top token agree
    positions: int  # answer positions scored
    reference: str | None = None  # the model it was compared with (each base its own)
    prompts: int = 0  # examples scored
    skipped: int = 0  # examples left out: no expected answer, or too long for the model
    status: FidelityStatus = "completed"  # completed, failed or interrupted
    error: str | None = None  # why it failed, in one line
    wall_s: float | None = None  # seconds from the worker's start to its close
    peak_rss_mb: float | None = None  # peak resident memory of the worker (both models)


@dataclass(frozen=True)
class FidelityRecord(Record):
    """fidelity.json: how closely each GGUF variant of a model follows the run's
    highest-precision variant of it, on the run's own prompts and expected answers
    (docs/metrics.md). No file: no fidelity (one model, or made before format 2.7)."""

    reference: str  # label of the reference model (the first base's, with several)
    reference_quantization: str | None  # its quantization
    prompts: int  # examples scored (of the reference's base)
    positions: int  # answer positions scored per variant
    variants: dict[str, FidelityVariant]  # variant label -> figures (the reference omitted)
    schema_version: str = SCHEMA_VERSION  # the run-folder format
    status: FidelityStatus = "completed"  # running, completed or interrupted
    threads: int | None = None  # threads each model ran with
    limit: int | None = None  # `edgebench fidelity --limit`: the run's first N examples
    answer_text: str = "json.dumps(expected, indent=2)"  # how the expected answer was written
    started_at: str | None = None  # UTC, ISO 8601
    finished_at: str | None = None  # UTC, ISO 8601

    def is_reference(self, model: str) -> bool:
        """The model some variant was compared with (each base its own reference)."""
        return model in {v.reference or self.reference for v in self.variants.values()}
