"""The records of a run folder, one shape whatever the run holds.

    manifest.json   Manifest: what ran (models, task, dataset, settings, device,
                    versions) and how each arm went (ArmRecord)
    samples.jsonl   SampleRecord per line: one (example, arm[, sampling]) each
    summary.json    Summary: figures derived from the two above

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

from edgebench.runfolder.record import Record, doc

SCHEMA_VERSION = "2.0"

Number = int | float
RunKind = Literal["run", "consistency"]
ArmStatus = Literal["running", "completed", "interrupted", "failed", "crashed", "skipped"]
RunStatus = Literal["running", "completed", "interrupted", "failed", "crashed"]


# -- what was asked ---------------------------------------------------------------
@dataclass(frozen=True)
class RunSettings(Record):
    """Everything that decides what a run measures (the options of `edgebench run`).

    `timeout`, `max_crashes` and `check_memory` decide how the run copes with trouble, not
    what it measures, so `--resume` may change them."""

    model: str | None = doc("`--model` as given (None: the default model)", default=None)
    task: str = doc("`--task`", default="edgejson")
    dataset: Path | None = doc("`--dataset` (None: the task's built-in set)", default=None)
    schemas: Path | None = doc("`--schemas`", default=None)
    limit: int | None = doc("`--limit`: the first N examples", default=None)
    threads: int = doc("`--threads`", default=2)
    max_tokens: int | None = doc("`--max-tokens` (None: per schema, automatic)", default=None)
    n_ctx: int | None = doc("`--n-ctx` (None: sized to the prompts)", default=None)
    max_context: int | None = doc("`--max-context`", default=None)
    out: Path | None = doc("the run folder", default=None)
    warmup: bool = doc("one untimed generation before measuring", default=True)
    constraints: tuple[str, ...] = doc("constraint modes, one arm each", default=("none",))
    guard: bool = doc("the keyword guard in the schema modes", default=True)
    timeout: float | None = doc("seconds one example may take", default=None)
    max_crashes: int = doc("worker failures in a row before an arm gives up", default=3)
    check_memory: bool = doc("refuse a model that will not fit in memory", default=True)
    metrics: tuple[str, ...] = doc("metric families beyond the task's own", default=())
    metric_params: dict[str, dict[str, Any]] = doc(
        "family -> parameter -> value (`--metric-param`)", default_factory=dict
    )


@dataclass(frozen=True)
class ConsistencyPlan(Record):
    """How a consistency run samples: N generations per prompt and temperature."""

    samples_per_prompt: int = doc("generations per prompt and temperature")
    temperatures: list[float] = doc("sampling temperatures, in run order")
    seed: int = doc("seed of the first generation; generation i uses seed + i")
    seeds: list[int] = doc("every seed used")
    sampler: str = doc("how a token is drawn")
    sted_parameters: dict[str, float] = doc("STED parameters of the comparison")


# -- models -------------------------------------------------------------------------
@dataclass(frozen=True)
class PromptFormatRecord(Record):
    """How prompts were rendered for a model."""

    style: str = doc("`chat` (the model's chat template) or `completion`")
    template: str | None = doc("the completion template (completion style)", default=None)
    chat_template: str | None = doc("the chat template from the model file", default=None)
    stop: list[str] = doc("stop strings the prompt format adds", default_factory=list)


@dataclass(frozen=True)
class DecodingPlan(Record):
    """How a model's answers are decoded: the token budget and what ends an answer."""

    strategy: Literal["greedy", "sampling"] = doc("greedy, or seeded sampling (consistency)")
    max_tokens: int = doc("the largest token budget of any example")
    max_tokens_rule: str = doc("how the budgets were set")
    max_tokens_by_schema: dict[str, int] | None = doc(
        "budget per schema (or budget group); None with --max-tokens"
    )
    stop: list[str] = doc("stop strings (free text only)")
    stop_applies_to: str = doc("which constraint modes the stop strings apply to")
    constraints: list[str] = doc("the run's constraint modes")
    keyword_guard: bool = doc("the keyword guard was on in the schema modes")
    skipped_examples: int = doc("examples not decoded: prompt + budget do not fit the context")


@dataclass(frozen=True)
class MemoryCheck(Record):
    """The memory pre-check: model file plus KV cache against available memory."""

    model_bytes: int
    kv_bytes: int | None = doc("KV cache at n_ctx; None when the model does not say")
    n_ctx: int
    available_bytes: int
    needed_bytes: int
    fits: bool
    enforced: bool = doc("false with --ignore-memory-check")


@dataclass(frozen=True)
class ModelPlan(Record):
    """What every arm of one model shares, decided before the first arm runs."""

    n_ctx: int = doc("context size every worker of this model loads")
    decoding: DecodingPlan
    memory_check: MemoryCheck


@dataclass(frozen=True)
class ModelRecord(Record):
    """One model under test: identity, file, format, and its plan in this run."""

    label: str = doc("the name results are listed under")
    path: str = doc("model file (GGUF) or converted folder (ONNX)")
    sha256: str = doc("of the GGUF file, or of the ONNX weights")
    size_bytes: int
    backend: str = doc("runtime: llama (llama.cpp) or onnx (onnxruntime)")
    format: str = doc("gguf or onnx")
    prompt_format: PromptFormatRecord
    registry_name: str | None = None
    architecture: str | None = None
    gguf_name: str | None = doc("`general.name` of the GGUF header", default=None)
    quantization: str | None = None
    parameters: int | None = None
    context_length: int | None = doc("the model's training context", default=None)
    license: str | None = None
    base_model: str | None = doc("Hub repo of the weights", default=None)
    onnx: dict[str, Any] | None = doc("conversion provenance of an ONNX model", default=None)
    plan: ModelPlan | None = doc("set once the run has planned this model", default=None)


# -- the device, the task, the dataset ---------------------------------------------
@dataclass(frozen=True)
class Device(Record):
    """The machine, read before the model loads (`runtime` after the first load)."""

    cpu_model: str | None = None
    cpu_vendor: str | None = None
    cpu_flags: list[str] | None = None
    cpu_simd: list[str] | None = doc("SIMD extensions among the CPU flags", default=None)
    hypervisor: bool | None = doc("an x86 guest of a hypervisor", default=None)
    logical_cores: int | None = None
    physical_cores: int | None = None
    threads_used: int | None = None
    governor: str | None = None
    cpu_max_mhz: int | None = None
    ram_total_mb: int | None = None
    ram_available_mb: int | None = None
    swap_total_mb: int | None = None
    os: str | None = None
    kernel: str | None = None
    machine: str | None = None
    board_model: str | None = doc("device-tree model (Raspberry Pi) or DMI name", default=None)
    power_source: str | None = doc("ac or battery, when reported", default=None)
    cpu_temp_c: float | None = None
    cpu_temp_sensor: str | None = None
    throttling: dict[str, Any] | None = doc("Raspberry Pi firmware flags", default=None)
    cpu_cur_mhz: int | None = None
    load_avg_1m: float | None = None
    cpus_allowed: int | None = None
    platform: str | None = None
    python: str | None = None
    python_implementation: str | None = None
    runtime: dict[str, Any] | None = doc(
        "the inference library's name, version and build", default=None
    )


@dataclass(frozen=True)
class TaskRecord(Record):
    name: str
    prompt_template: str = doc("the task's prompt, verbatim")
    metric_family: str = doc("the metric family that scores the task")


@dataclass(frozen=True)
class DatasetRecord(Record):
    path: str | None = None
    schemas: str | None = None
    sha256: str | None = doc("over the dataset file and every schema file", default=None)
    n_examples: int | None = doc("examples in the dataset (the run may take fewer)", default=None)
    limit: int | None = None


@dataclass(frozen=True)
class GitCommit(Record):
    commit: str
    dirty: bool = doc("uncommitted changes to tracked files")


@dataclass(frozen=True)
class FamilyRecord(Record):
    """A metric family as the run used it."""

    role: Literal["task", "extra"] = doc("the task's own family, or one added by --metrics")
    description: str
    source: str = doc("the paper that defines the scores (title and arXiv id)")
    scores: list[str] = doc("per-sample scores")
    summary: list[str] = doc("aggregated figures")
    higher_is_better: dict[str, bool]
    parameters: dict[str, Any]


# -- arms ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CompileRecord(Record):
    """Compiling one constraint (a distinct schema) for an arm."""

    mode: str
    key: str = doc("the grammar's cache key")
    label: str = doc("the schema id")
    ok: bool
    seconds: float = doc("first compile")
    cached: bool
    source: str = doc("where the grammar text came from")
    error: str | None
    warnings: list[str] = doc("schema keywords the engine reads past")
    guarded: list[str] = doc("keywords the keyword guard enforces")
    cached_seconds: float | None = doc("the same schema again (cached)")


@dataclass(frozen=True)
class MemoryRecord(Record):
    """Peak resident memory of an arm's worker processes, in MB."""

    peak_rss_mb: float
    peak_rss_anon_mb: float | None
    peak_rss_file_mb: float | None
    samples: int = doc("readings taken")
    source: str = doc("proc (/proc/PID/status, VmHWM exact), psutil or none")


@dataclass(frozen=True)
class WorkerFailure(Record):
    """An example whose worker died, timed out or raised."""

    index: int
    id: str
    kind: str = doc("crashed, timeout or error")
    error: str


@dataclass(frozen=True)
class ArmRecord(Record):
    """One model under one constraint mode, decoded in its own worker process(es)."""

    model: str
    constraint: str
    status: ArmStatus
    skip_reason: str | None = doc("why the runtime cannot apply the mode", default=None)
    error: str | None = None
    n_ctx: int | None = None
    load_s: float | None = doc("first model load", default=None)
    reload_s: list[float] = doc("loads of replacement workers", default_factory=list)
    runtime: dict[str, Any] | None = doc("what the backend reported at load", default=None)
    compile: list[CompileRecord] = doc("first session's compiles", default_factory=list)
    memory: MemoryRecord | None = None
    restarts: int = 0
    worker_failures: list[WorkerFailure] = field(default_factory=list)
    warmup_error: str | None = None
    wall_s: float = 0.0

    @property
    def key(self) -> str:
        return arm_key(self.model, self.constraint)


def arm_key(model: str, constraint: str) -> str:
    """How an arm is named in messages and tables: "<model> | <mode>"."""
    return f"{model} | {constraint}"


@dataclass(frozen=True)
class ResumeRecord(Record):
    """One `--resume` of the run."""

    at: str
    command: list[str]
    previous_status: str
    samples_kept: int
    torn_line_dropped: bool
    worker_failures_retried: int
    duplicates_dropped: int
    stale_lock: dict[str, Any] | None = doc("the lock's holder, if it died", default=None)


@dataclass(frozen=True)
class RescoreRecord(Record):
    """One `edgebench score` of the run."""

    at: str
    edgebench: str
    git: GitCommit | None
    families: list[str]


@dataclass(frozen=True)
class Manifest(Record):
    """manifest.json: what ran, on what, with what, and how each arm went."""

    schema_version: str = doc("the run-folder format, major.minor")
    kind: RunKind = doc("run (`edgebench run`) or consistency (`edgebench consistency`)")
    run_id: str
    status: RunStatus
    started_at: str = doc("UTC, ISO 8601")
    command: list[str] = doc("argv of the command that made the run")
    settings: RunSettings
    models: list[ModelRecord]
    task: TaskRecord
    dataset: DatasetRecord
    device: Device
    packages: dict[str, str | None] = doc("versions of edgebench and its runtimes")
    git: GitCommit | None = doc("edgebench's commit, when run from a checkout")
    families: dict[str, FamilyRecord] = doc("metric families, the task's first")
    arms: list[ArmRecord] = doc("one per (model, constraint mode), in run order")
    consistency: ConsistencyPlan | None = doc("the sampling plan of a consistency run")
    finished_at: str | None = None
    wall_s: float | None = doc("wall clock of every session of the run", default=None)
    error: str | None = doc("what stopped the run", default=None)
    resumes: list[ResumeRecord] = field(default_factory=list)
    rescored: list[RescoreRecord] = field(default_factory=list)

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

    temperature: float
    seed: int
    sample: int = doc("generation number for this prompt and temperature, from 0")


@dataclass(frozen=True)
class ParseStep(Record):
    """Extracting one JSON value from the raw output."""

    ok: bool
    path: str = doc("whole, fenced_json, fenced, raw_decode or none")
    error: str | None


@dataclass(frozen=True)
class Timings(Record):
    """Speed of one answer, from the backend's raw timestamps (one formula for all)."""

    ttft_s: float | None = doc("time to first token: tokenization and prefill")
    latency_s: float
    prefill_tok_s: float | None
    decode_tok_s: float | None = doc("tokens after the first sampled one, per second")


@dataclass(frozen=True)
class SampleRecord(Record):
    """One line of samples.jsonl: one example decoded by one arm (one draw, when sampling).

    Exactly one record per (arm, example[, sampling]) whatever happened: decoded and
    scored, refused by the constraint engine (`unsupported`), too long for the context
    (`skipped`: not decoded, never scored), or lost with its worker (`crashed`,
    `timeout`: `--resume` runs those again)."""

    index: int = doc("the example's position among the run's examples")
    id: str
    model: str
    constraint: str
    sampling: Sampling | None = doc("None: greedy")
    schema_id: str
    groups: dict[str, str] = doc("labels results are broken down by")
    constraint_status: str = doc("none, applied or unsupported")
    constraint_warnings: list[str]
    constraint_guarded: list[str]
    prompt: str = doc("exactly what the model read")
    raw_output: str
    expected: Any
    parse: ParseStep | None = doc("None: not scored (skipped)")
    parsed: Any = doc("the extracted JSON value")
    scores: dict[str, dict[str, Number]] | None = doc(
        "family -> score -> value; None: not scored (skipped)"
    )
    score_details: dict[str, dict[str, Any]] = doc(
        "family -> what explains its scores (schema errors, per element type)"
    )
    finish_reason: str = doc("stop, length, unsupported, skipped, crashed, timeout or error")
    hit_token_limit: bool
    max_tokens: int | None
    prompt_tokens: int
    output_tokens: int = doc("tokens of raw_output")
    generated_tokens: int = doc("tokens sampled, an end-of-turn token included")
    forced_tokens: int = doc("tokens a grammar forced without sampling")
    forced_prefix_tokens: int
    forward_passes: int | None
    guard_vetoes: int
    guard_dead_ends: int
    timings: Timings
    runtime_counters: dict[str, float] = doc("the runtime's own counters, for cross-checks")
    error: str | None

    @property
    def job_key(self) -> tuple[str, float | None, int | None]:
        """What makes a record unique in its arm: example and draw."""
        draw = self.sampling
        return (self.id, draw.temperature if draw else None, draw.seed if draw else None)

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

    p50: float | None
    p95: float | None
    mean: float | None
    n: int


@dataclass(frozen=True)
class Perf(Record):
    """Speed, memory and token totals of one arm."""

    load_s: float | None
    peak_rss_mb: float | None
    peak_rss_anon_mb: float | None
    peak_rss_file_mb: float | None
    ttft_s: Distribution
    latency_s: Distribution
    prefill_tok_s: Distribution
    decode_tok_s: Distribution
    prompt_tokens_total: int
    output_tokens_total: int
    generated_tokens_total: int
    forced_tokens_total: int
    finish_reasons: dict[str, int]
    hit_token_limit: int
    wall_s: float | None


@dataclass(frozen=True)
class CompileSummary(Record):
    """Grammar compile times per distinct schema: the first compile and the cached one."""

    schemas: int
    unsupported: int
    first_s: Distribution
    cached_s: Distribution
    first_total_s: float
    sources: dict[str, int]
    errors: dict[str, str | None]
    schemas_with_unenforced_keywords: int


@dataclass(frozen=True)
class GuardSummary(Record):
    """What the keyword guard did."""

    samples_guarded: int
    vetoes: int = doc("candidate tokens struck out")
    dead_ends: int = doc("times every allowed token was refused")


Figures = dict[str, Number | None]


@dataclass(frozen=True)
class FamilySummary(Record):
    """One metric family over an arm: overall and per group of examples."""

    role: Literal["task", "extra"]
    higher_is_better: dict[str, bool]
    parameters: dict[str, Any]
    overall: Figures = doc("the family's figures over the scored examples, with `n`")
    groups: dict[str, dict[str, Figures]] = doc(
        "group (complexity, schema, depth, element_type ...) -> value -> figures"
    )


@dataclass(frozen=True)
class ArmSummary(Record):
    """Every figure of one arm (model x constraint mode)."""

    model: str
    constraint: str
    status: ArmStatus
    skip_reason: str | None
    n_examples: int = doc("records of the arm (skipped ones included)")
    n_errors: int
    n_unsupported: int
    n_crashed: int
    n_timeout: int
    n_skipped: int
    families: dict[str, FamilySummary] = doc("the task's family first")
    noncompliant: dict[str, int] | None = doc(
        "why outputs failed the task's schema score (None: the task has none)"
    )
    perf: Perf
    compile: CompileSummary
    guard: GuardSummary
    model_size_mb: float | None
    decode_ratio_to_none: float | None = doc("p50 decode tok/s over that of `none`, same model")
    decode_ratio_to_first_model: float | None = doc(
        "p50 decode tok/s over the first model's, same mode"
    )

    @property
    def key(self) -> str:
        return arm_key(self.model, self.constraint)

    @property
    def task(self) -> FamilySummary | None:
        """The task's own family (None for an arm that never ran)."""
        return next((f for f in self.families.values() if f.role == "task"), None)

    @property
    def metrics(self) -> Figures:
        """The task's own figures over the arm (empty for an arm that never ran)."""
        task = self.task
        return task.overall if task is not None else {}


@dataclass(frozen=True)
class PromptConsistency(Record):
    """How much the N answers to one prompt at one temperature agree."""

    n: int
    valid_json: int
    consistency: float | None
    consistency_structural: float | None
    consistency_semantic: float | None
    sted_mean: float | None
    sted_std: float | None


@dataclass(frozen=True)
class TemperatureConsistency(Record):
    """Consistency at one temperature: means over prompts, and the task's figures of all
    generations."""

    n_prompts: int
    n_generations: int
    consistency: float | None
    consistency_structural: float | None
    consistency_semantic: float | None
    sted_mean: float | None
    sted_std: float | None
    task_metrics: Figures


@dataclass(frozen=True)
class ConsistencySummary(Record):
    """What a consistency run adds: STED between the samples of each prompt."""

    samples_per_prompt: int
    temperatures: list[float]
    seeds: list[int]
    parameters: dict[str, float]
    higher_is_better: dict[str, bool]
    by_temperature: dict[str, TemperatureConsistency]
    by_prompt: dict[str, dict[str, PromptConsistency]] = doc("temperature -> example id -> ...")


@dataclass(frozen=True)
class Summary(Record):
    """summary.json: derived from manifest.json and samples.jsonl, never kept by hand."""

    schema_version: str
    kind: RunKind
    run_id: str
    task: str
    task_family: str
    status: RunStatus
    models: list[str]
    constraints: list[str]
    arms: list[ArmSummary] = doc("one per (model, constraint mode), in run order")
    consistency: ConsistencySummary | None = doc("consistency runs")

    def arm(self, model: str, constraint: str) -> ArmSummary | None:
        return next((a for a in self.arms if (a.model, a.constraint) == (model, constraint)), None)

    def arms_of(self, model: str) -> list[ArmSummary]:
        return [a for a in self.arms if a.model == model]
