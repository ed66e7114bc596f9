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

from dataclasses import dataclass
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

    model_bytes: int = doc("the model file")
    kv_bytes: int | None = doc("KV cache at n_ctx; None when the model does not say")
    n_ctx: int = doc("the context the KV cache is counted for")
    available_bytes: int = doc("MemAvailable when the run planned")
    needed_bytes: int = doc("model_bytes + kv_bytes")
    fits: bool = doc("needed_bytes <= available_bytes")
    enforced: bool = doc("false with --ignore-memory-check")


@dataclass(frozen=True)
class ModelPlan(Record):
    """What every arm of one model shares, decided before the first arm runs."""

    n_ctx: int = doc("context size every worker of this model loads")
    decoding: DecodingPlan = doc("token budgets and stop strings")
    memory_check: MemoryCheck = doc("the memory pre-check at n_ctx")


@dataclass(frozen=True)
class ModelRecord(Record):
    """One model under test: identity, file, format, and its plan in this run."""

    label: str = doc("the name results are listed under")
    path: str = doc("model file (GGUF) or converted folder (ONNX)")
    sha256: str = doc("of the GGUF file, or of the ONNX weights")
    size_bytes: int = doc("bytes on disk (file, or the converted folder's weights)")
    backend: str = doc("runtime: llama (llama.cpp) or onnx (onnxruntime)")
    format: str = doc("gguf or onnx")
    prompt_format: PromptFormatRecord = doc("how prompts were rendered for this model")
    registry_name: str | None = doc("the registry entry it came from, if any", default=None)
    architecture: str | None = doc("from the model file (llama, gemma3 ...)", default=None)
    gguf_name: str | None = doc("`general.name` of the GGUF header", default=None)
    quantization: str | None = doc("Q4_1, Q4_K_M, int4 ...", default=None)
    parameters: int | None = doc("parameter count, when the file says", default=None)
    context_length: int | None = doc("the model's training context", default=None)
    license: str | None = doc("from the registry entry", default=None)
    base_model: str | None = doc("Hub repo of the weights", default=None)
    onnx: dict[str, Any] | None = doc("conversion provenance of an ONNX model", default=None)
    plan: ModelPlan | None = doc("set once the run has planned this model", default=None)


# -- the device, the task, the dataset ---------------------------------------------
@dataclass(frozen=True)
class Device(Record):
    """The machine, read before the model loads (`runtime` after the first load)."""

    cpu_model: str | None = doc("from /proc/cpuinfo (or the ARM part number)", default=None)
    cpu_vendor: str | None = doc("vendor id, or the ARM implementer", default=None)
    cpu_flags: list[str] | None = doc("every CPU flag the kernel reports", default=None)
    cpu_simd: list[str] | None = doc("SIMD extensions among the CPU flags", default=None)
    hypervisor: bool | None = doc("an x86 guest of a hypervisor", default=None)
    logical_cores: int | None = doc("CPUs online", default=None)
    physical_cores: int | None = doc("distinct cores (hyper-threads share one)", default=None)
    threads_used: int | None = doc("threads the model ran with", default=None)
    governor: str | None = doc("cpufreq scaling governor(s)", default=None)
    cpu_max_mhz: int | None = doc("highest CPU clock", default=None)
    ram_total_mb: int | None = doc("MemTotal", default=None)
    ram_available_mb: int | None = doc("MemAvailable before the model loaded", default=None)
    swap_total_mb: int | None = doc("SwapTotal", default=None)
    os: str | None = doc("PRETTY_NAME of /etc/os-release", default=None)
    kernel: str | None = doc("kernel release", default=None)
    machine: str | None = doc("x86_64, aarch64 ...", default=None)
    board_model: str | None = doc("device-tree model (Raspberry Pi) or DMI name", default=None)
    power_source: str | None = doc("ac or battery, when reported", default=None)
    cpu_temp_c: float | None = doc("CPU or SoC temperature before the run", default=None)
    cpu_temp_sensor: str | None = doc("where the temperature was read", default=None)
    throttling: dict[str, Any] | None = doc("Raspberry Pi firmware flags", default=None)
    cpu_cur_mhz: int | None = doc("CPU clock before the run", default=None)
    load_avg_1m: float | None = doc("1-minute load average before the run", default=None)
    cpus_allowed: int | None = doc("CPUs this process may run on", default=None)
    platform: str | None = doc("Python's platform string", default=None)
    python: str | None = doc("Python version", default=None)
    python_implementation: str | None = doc("CPython, PyPy ...", default=None)
    runtime: dict[str, Any] | None = doc(
        "the inference library's name, version and build", default=None
    )


@dataclass(frozen=True)
class TaskRecord(Record):
    name: str = doc("edgejson, deepjson, roundtrip ...")
    prompt_template: str = doc("the task's prompt, verbatim")
    metric_family: str = doc("the metric family that scores the task")


@dataclass(frozen=True)
class DatasetRecord(Record):
    path: str | None = doc("the dataset file", default=None)
    schemas: str | None = doc("its schema folder (EdgeJSON layout), if any", default=None)
    sha256: str | None = doc("over the dataset file and every schema file", default=None)
    n_examples: int | None = doc("examples in the dataset (the run may take fewer)", default=None)
    limit: int | None = doc("`--limit`: the run took the first N examples", default=None)


@dataclass(frozen=True)
class GitCommit(Record):
    commit: str = doc("sha1 of HEAD")
    dirty: bool = doc("uncommitted changes to tracked files")


@dataclass(frozen=True)
class FamilyRecord(Record):
    """A metric family as the run used it."""

    role: Literal["task", "extra"] = doc("the task's own family, or one added by --metrics")
    description: str = doc("what the scores measure")
    source: str = doc("the paper that defines the scores (title and arXiv id)")
    scores: list[str] = doc("per-sample scores")
    summary: list[str] = doc("aggregated figures")
    higher_is_better: dict[str, bool] = doc("figure -> direction")
    parameters: dict[str, Any] = doc("the family's named choices, as the run used them")


# -- arms ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CompileRecord(Record):
    """Compiling one constraint (a distinct schema) for an arm."""

    mode: str = doc("the constraint mode")
    key: str = doc("the grammar's cache key")
    label: str = doc("the schema id")
    ok: bool = doc("the engine accepted the schema")
    seconds: float = doc("first compile")
    cached: bool = doc("served from the worker's in-memory cache")
    source: str = doc("where the grammar text came from")
    error: str | None = doc("why the engine refused it")
    warnings: list[str] = doc("schema keywords the engine reads past")
    guarded: list[str] = doc("keywords the keyword guard enforces")
    cached_seconds: float | None = doc("the same schema again (cached)")


@dataclass(frozen=True)
class MemoryRecord(Record):
    """Peak resident memory of an arm's worker processes, in MB."""

    peak_rss_mb: float = doc("total resident memory (VmHWM where readable)")
    peak_rss_anon_mb: float | None = doc("anonymous pages: weights copied to RAM, KV cache, heap")
    peak_rss_file_mb: float | None = doc("file-backed pages: the mmapped model file")
    samples: int = doc("readings taken")
    source: str = doc("proc (/proc/PID/status, VmHWM exact), psutil or none")


@dataclass(frozen=True)
class WorkerFailure(Record):
    """An example whose worker died, timed out or raised."""

    index: int = doc("the example's position in the run")
    id: str = doc("the example id")
    kind: str = doc("crashed, timeout or error")
    error: str = doc("one line: what happened and where")


@dataclass(frozen=True)
class ArmRecord(Record):
    """One model under one constraint mode, decoded in its own worker process(es)."""

    model: str = doc("the model's label")
    constraint: str = doc("the constraint mode: none, json, gbnf, outlines or mask")
    status: ArmStatus = doc("how the arm ended (skipped: its runtime cannot apply the mode)")
    skip_reason: str | None = doc("why the runtime cannot apply the mode", default=None)
    error: str | None = doc("what stopped the arm", default=None)
    n_ctx: int | None = doc("the context the worker loaded", default=None)
    load_s: float | None = doc("first model load", default=None)
    reload_s: list[float] = doc("loads of replacement workers", default_factory=list)
    runtime: dict[str, Any] | None = doc("what the backend reported at load", default=None)
    compile: list[CompileRecord] = doc("first session's compiles", default_factory=list)
    memory: MemoryRecord | None = doc("peak resident memory over the arm's workers", default=None)
    restarts: int = doc("fresh workers started after a crash or timeout", default=0)
    worker_failures: list[WorkerFailure] = doc(
        "jobs lost to a crash, timeout or backend error", default_factory=list
    )
    warmup_error: str | None = doc(
        "a warm-up that failed (the arm went on without it)", default=None
    )
    wall_s: float = doc("wall clock of the arm, every session", default=0.0)

    @property
    def key(self) -> str:
        return arm_key(self.model, self.constraint)


def arm_key(model: str, constraint: str) -> str:
    """How an arm is named in messages and tables: "<model> | <mode>"."""
    return f"{model} | {constraint}"


@dataclass(frozen=True)
class ResumeRecord(Record):
    """One `--resume` of the run."""

    at: str = doc("UTC, ISO 8601")
    command: list[str] = doc("argv of the resuming command")
    previous_status: str = doc("the status the run had")
    samples_kept: int = doc("records kept from earlier sessions")
    torn_line_dropped: bool = doc("a last line cut by a crash was dropped")
    worker_failures_retried: int = doc("crashed or timed-out jobs run again")
    duplicates_dropped: int = doc("records of a job already kept")
    stale_lock: dict[str, Any] | None = doc("the lock's holder, if it died", default=None)


@dataclass(frozen=True)
class RescoreRecord(Record):
    """One `edgebench score` of the run."""

    at: str = doc("UTC, ISO 8601")
    edgebench: str = doc("the edgebench version that scored")
    git: GitCommit | None = doc("its commit")
    families: list[str] = doc("the families it scored with")


@dataclass(frozen=True)
class Manifest(Record):
    """manifest.json: what ran, on what, with what, and how each arm went."""

    schema_version: str = doc("the run-folder format, major.minor")
    kind: RunKind = doc("run (`edgebench run`) or consistency (`edgebench consistency`)")
    run_id: str = doc("the run folder's name")
    status: RunStatus = doc("running while a session writes; what stopped it otherwise")
    started_at: str = doc("UTC, ISO 8601")
    command: list[str] = doc("argv of the command that made the run")
    settings: RunSettings = doc("the options the run was made with")
    models: list[ModelRecord] = doc("every model of the run, in run order")
    task: TaskRecord = doc("the task and the prompt it asks")
    dataset: DatasetRecord = doc("the dataset file and its identity")
    device: Device = doc("the machine the run measured")
    packages: dict[str, str | None] = doc("versions of edgebench and its runtimes")
    git: GitCommit | None = doc("edgebench's commit, when run from a checkout")
    families: dict[str, FamilyRecord] = doc("metric families, the task's first")
    arms: list[ArmRecord] = doc("one per (model, constraint mode), in run order")
    consistency: ConsistencyPlan | None = doc("the sampling plan of a consistency run")
    finished_at: str | None = doc("UTC, ISO 8601, when the last session ended", default=None)
    wall_s: float | None = doc("wall clock of every session of the run", default=None)
    error: str | None = doc("what stopped the run", default=None)
    resumes: list[ResumeRecord] = doc("one record per --resume", default_factory=list)
    rescored: list[RescoreRecord] = doc("one record per `edgebench score`", default_factory=list)

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

    temperature: float = doc("sampling temperature")
    seed: int = doc("the draw's seed")
    sample: int = doc("generation number for this prompt and temperature, from 0")


@dataclass(frozen=True)
class ParseStep(Record):
    """Extracting one JSON value from the raw output."""

    ok: bool = doc("a JSON value was found")
    path: str = doc("whole, fenced_json, fenced, raw_decode or none")
    error: str | None = doc("why not")


@dataclass(frozen=True)
class Timings(Record):
    """Speed of one answer, from the backend's raw timestamps (one formula for all)."""

    ttft_s: float | None = doc("time to first token: tokenization and prefill")
    latency_s: float = doc("request to last token")
    prefill_tok_s: float | None = doc("prompt tokens / TTFT")
    decode_tok_s: float | None = doc("tokens after the first sampled one, per second")


@dataclass(frozen=True)
class SampleRecord(Record):
    """One line of samples.jsonl: one example decoded by one arm (one draw, when sampling).

    Exactly one record per (arm, example[, sampling]) whatever happened: decoded and
    scored, refused by the constraint engine (`unsupported`), too long for the context
    (`skipped`: not decoded, never scored), or lost with its worker (`crashed`,
    `timeout`: `--resume` runs those again)."""

    index: int = doc("the example's position among the run's examples")
    id: str = doc("the example id")
    model: str = doc("the arm's model")
    constraint: str = doc("the arm's constraint mode")
    sampling: Sampling | None = doc("None: greedy")
    schema_id: str = doc("the example's schema")
    groups: dict[str, str] = doc("labels results are broken down by")
    constraint_status: str = doc("none, applied or unsupported")
    constraint_warnings: list[str] = doc(
        "schema keywords the engine reads past (output may break them)"
    )
    constraint_guarded: list[str] = doc("keywords the keyword guard enforced")
    prompt: str = doc("exactly what the model read")
    raw_output: str = doc("the model's text, verbatim")
    expected: Any = doc("the example's answer")
    parse: ParseStep | None = doc("None: not scored (skipped)")
    parsed: Any = doc("the extracted JSON value")
    scores: dict[str, dict[str, Number]] | None = doc(
        "family -> score -> value; None: not scored (skipped)"
    )
    score_details: dict[str, dict[str, Any]] = doc(
        "family -> what explains its scores (schema errors, per element type)"
    )
    finish_reason: str = doc("stop, length, unsupported, skipped, crashed, timeout or error")
    hit_token_limit: bool = doc("the answer was cut at max_tokens")
    max_tokens: int | None = doc("the token budget of this example")
    prompt_tokens: int = doc("tokens of the prompt")
    output_tokens: int = doc("tokens of raw_output")
    generated_tokens: int = doc("tokens sampled, an end-of-turn token included")
    forced_tokens: int = doc("tokens a grammar forced without sampling")
    forced_prefix_tokens: int = doc("forced tokens evaluated with the prompt")
    forward_passes: int | None = doc("llama_decode calls after the prompt, where counted")
    guard_vetoes: int = doc("candidate tokens the keyword guard struck out")
    guard_dead_ends: int = doc("times the guard had to give way")
    timings: Timings = doc("speed of this answer")
    runtime_counters: dict[str, Number] = doc("the runtime's own counters, for cross-checks")
    error: str | None = doc("why nothing (or a failed score) was recorded")

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

    p50: float | None = doc("median")
    p95: float | None = doc("95th percentile")
    mean: float | None = doc("mean")
    n: int = doc("examples measured")


@dataclass(frozen=True)
class Perf(Record):
    """Speed, memory and token totals of one arm."""

    load_s: float | None = doc("first model load")
    peak_rss_mb: float | None = doc("peak resident memory of the arm's worker")
    peak_rss_anon_mb: float | None = doc("its anonymous part")
    peak_rss_file_mb: float | None = doc("its file-backed part")
    ttft_s: Distribution = doc("time to first token")
    latency_s: Distribution = doc("request to last token")
    prefill_tok_s: Distribution = doc("prompt tokens per second")
    decode_tok_s: Distribution = doc("generated tokens per second after the first")
    prompt_tokens_total: int = doc("over the arm")
    output_tokens_total: int = doc("over the arm")
    generated_tokens_total: int = doc("over the arm")
    forced_tokens_total: int = doc("over the arm")
    finish_reasons: dict[str, int] = doc("finish reason -> examples")
    hit_token_limit: int = doc("answers cut at max_tokens")
    wall_s: float | None = doc("wall clock of the arm")


@dataclass(frozen=True)
class CompileSummary(Record):
    """Grammar compile times per distinct schema: the first compile and the cached one."""

    schemas: int = doc("distinct schemas compiled")
    unsupported: int = doc("schemas the engine refused")
    first_s: Distribution = doc("first compile per schema")
    cached_s: Distribution = doc("the same schema again")
    first_total_s: float = doc("all first compiles")
    sources: dict[str, int] = doc("where grammars came from -> schemas")
    errors: dict[str, str | None] = doc("schema -> why refused")
    schemas_with_unenforced_keywords: int = doc("schemas with keywords the engine reads past")


@dataclass(frozen=True)
class GuardSummary(Record):
    """What the keyword guard did."""

    samples_guarded: int = doc("samples whose schema the guard watched")
    vetoes: int = doc("candidate tokens struck out")
    dead_ends: int = doc("times every allowed token was refused")


Figures = dict[str, Number | None]


@dataclass(frozen=True)
class FamilySummary(Record):
    """One metric family over an arm: overall and per group of examples."""

    role: Literal["task", "extra"] = doc("task: the task's own family; extra: added with --metrics")
    higher_is_better: dict[str, bool] = doc("figure -> direction")
    parameters: dict[str, Any] = doc("the family's parameters")
    overall: Figures = doc("the family's figures over the scored examples, with `n`")
    groups: dict[str, dict[str, Figures]] = doc(
        "group (complexity, schema, depth, element_type ...) -> value -> figures"
    )


@dataclass(frozen=True)
class ArmSummary(Record):
    """Every figure of one arm (model x constraint mode)."""

    model: str = doc("the model's label")
    constraint: str = doc("the constraint mode")
    status: ArmStatus = doc("how the arm ended")
    skip_reason: str | None = doc("why the runtime cannot apply the mode")
    n_examples: int = doc("records of the arm (skipped ones included)")
    n_errors: int = doc("records with an error (not skipped)")
    n_unsupported: int = doc("examples whose schema the engine refused")
    n_crashed: int = doc("examples lost to a worker crash")
    n_timeout: int = doc("examples that outlived --timeout")
    n_skipped: int = doc("examples too long for the context limit (not scored)")
    families: dict[str, FamilySummary] = doc("the task's family first")
    noncompliant: dict[str, int] | None = doc(
        "why outputs failed the task's schema score (None: the task has none)"
    )
    perf: Perf = doc("speed, memory and token totals")
    compile: CompileSummary = doc("grammar compile times")
    guard: GuardSummary = doc("what the keyword guard did")
    model_size_mb: float | None = doc("the model on disk")
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

    n: int = doc("generations")
    valid_json: int = doc("generations that parsed")
    consistency: float | None = doc("mean(s) * exp(-k * sigma / 0.5) over pairwise hybrid STED")
    consistency_structural: float | None = doc("the same with structure-only STED")
    consistency_semantic: float | None = doc("the same with values-only STED")
    sted_mean: float | None = doc("mean pairwise similarity")
    sted_std: float | None = doc("its standard deviation")


@dataclass(frozen=True)
class TemperatureConsistency(Record):
    """Consistency at one temperature: means over prompts, and the task's figures of all
    generations."""

    n_prompts: int = doc("prompts compared")
    n_generations: int = doc("generations at this temperature")
    consistency: float | None = doc("mean of the prompts' consistency scores (hybrid STED)")
    consistency_structural: float | None = doc("the same with structure-only STED")
    consistency_semantic: float | None = doc("the same with values-only STED")
    sted_mean: float | None = doc("mean pairwise STED similarity")
    sted_std: float | None = doc("mean of the prompts' standard deviations")
    task_metrics: Figures = doc("the task's figures over every generation")


@dataclass(frozen=True)
class ConsistencySummary(Record):
    """What a consistency run adds: STED between the samples of each prompt."""

    samples_per_prompt: int = doc("generations per prompt and temperature")
    temperatures: list[float] = doc("in run order")
    seeds: list[int] = doc("every seed used")
    parameters: dict[str, float] = doc("STED parameters")
    higher_is_better: dict[str, bool] = doc("figure -> direction")
    by_temperature: dict[str, TemperatureConsistency] = doc("temperature -> means over prompts")
    by_prompt: dict[str, dict[str, PromptConsistency]] = doc("temperature -> example id -> ...")


@dataclass(frozen=True)
class Summary(Record):
    """summary.json: derived from manifest.json and samples.jsonl, never kept by hand."""

    schema_version: str = doc("the run-folder format, major.minor")
    kind: RunKind = doc("run or consistency")
    run_id: str = doc("the run folder's name")
    task: str = doc("the task's name")
    task_family: str = doc("the metric family whose figures are the task's own")
    status: RunStatus = doc("the run's status")
    models: list[str] = doc("model labels, in run order")
    constraints: list[str] = doc("constraint modes, in run order")
    arms: list[ArmSummary] = doc("one per (model, constraint mode), in run order")
    consistency: ConsistencySummary | None = doc("consistency runs")

    def arm(self, model: str, constraint: str) -> ArmSummary | None:
        return next((a for a in self.arms if (a.model, a.constraint) == (model, constraint)), None)

    def arms_of(self, model: str) -> list[ArmSummary]:
        return [a for a in self.arms if a.model == model]
