"""Option types shared by commands, so every command spells them the same way."""

from __future__ import annotations

import os
import re
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer

# The help texts' values from choices.py: `--help` loads no registry (startup time).
from edgebench.cli.choices import (
    CLOSABLE_MODES,
    CLOSE_SUFFIX,
    CONTENDED_SHARE,
    DEFAULT_COMPILE_TIMEOUT,
    DEFAULT_MAX_CRASHES,
    DEFAULT_RETIME_MAX,
    FAMILY_NAMES,
    FAMILY_NOTES,
    MODES,
    PARSE_MODES,
    RETIME_MODES,
)
from edgebench.errors import UserError
from edgebench.tasks import DEFAULT_TASK, TASKS, task_names
from edgebench.tasks.base import PROMPT_STYLES

if TYPE_CHECKING:
    from edgebench.runfolder.records import RunSettings


def listing(names: list[str] | tuple[str, ...], notes: dict[str, str] | None = None) -> str:
    """Accepted values for a help text, from the code's own registry (so the help cannot
    drift from what is accepted), each with a note where one helps: "a (x), b or c"."""
    items = [f"{n} ({notes[n]})" if notes and n in notes else n for n in names]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


# Notes beside the values the registries hold (a value without a note is listed bare).
TASK_NOTES = {name: info.note for name, info in TASKS.items()}
PARSE_NOTES = {
    "lenient": "the whole text, a fenced block, or the first complete JSON value",
    "reference": "what the task's published scorer accepts: DeepJSONEval, the EdgeJSON "
    "harness, JSONSchemaBench, with no stop at the JSON and no loop detection, which "
    "they lack (so also with --prompt reference); roundtrip has none and stays lenient",
}
PROMPT_NOTES = {
    "default": "edgebench's prompt: instructions, the schema, the text",
    "reference": "the benchmark's own published prompt, for numbers next to its "
    "leaderboard: EdgeJSON's harness prompt has no schema; DeepJSONEval's every rule "
    "and its indented schema",
}
CLOSING_ARMS = tuple(f"{mode}{CLOSE_SUFFIX}" for mode in CLOSABLE_MODES)


def default_threads() -> int:
    """Physical cores where known: llama.cpp gains nothing from hyper-threads."""
    try:
        import psutil

        physical = psutil.cpu_count(logical=False)
    except ImportError:
        physical = None
    return physical or os.cpu_count() or 1


ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="NAME",
        help="Registry name, NAME@onnx-int4 / NAME@onnx-fp32 (converted), a local .gguf path, "
        "or hf:REPO/FILE (one model: a comma is part of its name). "
        "Default: smollm2-135m-instruct.",
    ),
]
ModelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        metavar="NAME[,NAME]",
        help="Registry name, NAME@Q4_K_M (quantized), NAME@onnx-int4 / NAME@onnx-fp32 "
        "(converted), a local .gguf path, or hf:REPO/FILE. Several run one after another in "
        "one run: repeat --model (each value is one model, commas and all) or separate them "
        "with commas in one value (write a comma inside a path as \\,); `NAME@Q8_0,@Q2_K` "
        "repeats NAME for each variant. Default: smollm2-135m-instruct.",
    ),
]
# A comma separates models unless a backslash escapes it (`dir\\,v2/m.gguf`).
_SEPARATOR = re.compile(r"(?<!\\),")


def join_models(values: list[str] | None) -> str | None:
    """`--model` as given -> the one text `RunSettings.model` records: a single value as
    typed (a comma list, maybe with escapes); repeated values each taken whole, their
    commas escaped, so `parse_model_list` gives them back."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return ",".join(value.replace(",", "\\,") for value in values)


def parse_model_list(text: str | None) -> list[str | None]:
    """`--model a,b` -> the model specs in order (`\\,` is a comma inside one); None (the
    default model) when absent."""
    if text is None:
        return [None]
    specs = [part.strip().replace("\\,", ",") for part in _SEPARATOR.split(text)]
    if not all(specs):
        raise UserError(
            f"--model: empty name in {text!r} (separate models with commas, or repeat --model)"
        )
    return expand_variants(specs)


def expand_variants(specs: list[str]) -> list[str]:
    """The sweep short form: `NAME@Q8_0,@Q4_K_M` -> NAME@Q8_0, NAME@Q4_K_M (`@TYPE`
    takes the base name of the model before it)."""
    expanded: list[str] = []
    for spec in specs:
        if spec.startswith("@"):
            if not expanded:
                raise UserError(
                    f"--model: {spec!r} needs a model name before it "
                    f"(e.g. smollm2-135m-instruct@Q8_0,{spec})"
                )
            previous = expanded[-1]
            base = previous.rpartition("@")[0] if "@" in previous else previous
            spec = base + spec
        expanded.append(spec)
    return expanded


def threads_option(help_text: str) -> Any:
    """`-t/--threads N`: CPU threads, at least 1."""
    return typer.Option("--threads", "-t", metavar="N", min=1, help=help_text)


ThreadsOpt = Annotated[
    int | None, threads_option("CPU threads for the model (default: physical cores).")
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        metavar="N",
        min=1,
        help="Token budget per answer (default: the dataset's longest expected answer + 25%).",
    ),
]
NCtxOpt = Annotated[
    int | None,
    typer.Option(
        "--n-ctx", metavar="N", min=64, help="Context size (default: longest prompt + max tokens)."
    ),
]
MaxContextOpt = Annotated[
    int | None,
    typer.Option(
        "--max-context",
        metavar="N",
        min=64,
        help="Largest context the automatic n_ctx may grow to; examples whose prompt + "
        "budget do not fit are recorded as skipped (default: the model's context length).",
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", "-n", metavar="N", min=1, help="Run only the first N examples."),
]
SampleOpt = Annotated[
    int | None,
    typer.Option(
        "--sample",
        metavar="N",
        help="Run a seeded subset of N examples (with --stratify: spread evenly over a "
        "group); token budgets and n_ctx stay those of the whole dataset. Excludes --limit.",
    ),
]
StratifyOpt = Annotated[
    str | None,
    typer.Option(
        "--stratify",
        metavar="GROUP",
        help="Spread --sample evenly over this group: "
        + ", ".join(f"{', '.join(i.groups)} ({i.name})" for i in TASKS.values() if i.groups)
        + "; the remainder goes to groups in sorted order.",
    ),
]
SampleSeedOpt = Annotated[
    int | None, typer.Option("--seed", metavar="N", help="Seed of --sample (default: 0).")
]
StrictDataOpt = Annotated[
    bool | None,
    typer.Option(
        "--strict-data/--no-strict-data",
        help="Refuse a dataset with a row whose expected output fails its own schema "
        "(default: leave such rows out, listed in manifest.json).",
    ),
]


def out_option(help_text: str, metavar: str = "FILE") -> Any:
    """`-o/--out PATH`: the one spelling of "where to write it" on every command."""
    return typer.Option("--out", "-o", metavar=metavar, help=help_text)


OutOpt = Annotated[
    Path | None,
    out_option("Run folder to create (default: runs/<time>-<model>-<task>).", metavar="DIR"),
]
MetricsOpt = Annotated[
    str | None,
    typer.Option(
        "--metrics",
        metavar="FAMILY[,FAMILY]",
        help="Extra metric families, several comma-separated, scored next to the task's own: "
        f"{listing(FAMILY_NAMES, FAMILY_NOTES)}.",
    ),
]
MetricParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metric-param",
        metavar="FAMILY.NAME=VALUE",
        help="Set a metric parameter, FAMILY.NAME=VALUE (repeatable), "
        "e.g. sobench.fuzzy_string_threshold=0.9.",
    ),
]
TaskOpt = Annotated[
    str | None,
    typer.Option(
        "--task",
        metavar="TASK",
        help=f"Task: {listing(task_names(), TASK_NOTES)} (default: {DEFAULT_TASK}).",
    ),
]
DatasetOpt = Annotated[
    Path | None,
    typer.Option(
        "--dataset",
        metavar="FILE",
        help="Dataset file: JSONL, or for deepjson also .xlsx (default: built-in).",
    ),
]
SchemasOpt = Annotated[
    Path | None,
    typer.Option("--schemas", metavar="DIR", help="Folder of the dataset's JSON Schemas."),
]
WarmupOpt = Annotated[
    bool | None,
    typer.Option("--warmup/--no-warmup", help="One untimed generation first (default: on)."),
]
GuardOpt = Annotated[
    bool | None,
    typer.Option(
        "--guard/--no-guard",
        help="Schema modes: enforce numeric bounds and uniqueItems, which the grammar "
        "engines read past (--no-guard: the engine alone; default: on).",
    ),
]
StopAtJsonOpt = Annotated[
    bool | None,
    typer.Option(
        "--stop-at-json/--no-stop-at-json",
        help="Free modes (none, json): end an answer when its first JSON object or array "
        "is complete, as a deployment reads it (--no-stop-at-json: the raw answer up to "
        "the model's own end or the budget; default: on, off under --parse or --prompt "
        "reference).",
    ),
]
LoopDetectionOpt = Annotated[
    bool | None,
    typer.Option(
        "--loop-detection/--no-loop-detection",
        help="End an answer whose last 32+ tokens repeat with a period of up to 32 tokens "
        "(finish reason 'loop'; default: on, off under --parse or --prompt reference).",
    ),
]
FidelityOpt = Annotated[
    bool | None,
    typer.Option(
        "--fidelity/--no-fidelity",
        help="After the arms of a run with two or more GGUF variants of one model "
        "(NAME@Q8_0,NAME@Q4_K_M ...): KL divergence and top-1 agreement of each against "
        "the highest-precision one on the run's prompts and expected answers, into "
        "fidelity.json (default: on).",
    ),
]
CloseOpt = Annotated[
    bool,
    typer.Option(
        "--close",
        help="Schema modes: close an answer cut off by its budget or a loop with the "
        "shortest completion the schema allows, forced through the engine (the arm is "
        "named MODE+close; --constraint mask,mask+close compares both).",
    ),
]
CloseTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--close-tokens",
        metavar="N",
        min=1,
        help="Tokens closing may add after the budget (default: 256).",
    ),
]
PrefixCacheOpt = Annotated[
    bool | None,
    typer.Option(
        "--prefix-cache/--no-prefix-cache",
        help="Keep the KV of the prompt prefix a schema's examples share (system prompt, "
        "instructions, schema) and run those examples one after another: TTFT is then "
        "warm, as a server with a prompt cache sees it (llama.cpp models; default: off).",
    ),
]
ParseOpt = Annotated[
    str | None,
    typer.Option(
        "--parse",
        metavar="MODE",
        help=f"How the JSON is taken from an answer: {listing(PARSE_MODES, PARSE_NOTES)}. "
        "Valid JSON is the same in both (default: lenient; `score`: the run's).",
    ),
]
PromptOpt = Annotated[
    str | None,
    typer.Option(
        "--prompt",
        metavar="STYLE",
        help=f"Prompt style: {listing(PROMPT_STYLES, PROMPT_NOTES)} (default: default).",
    ),
]
RETIME_NOTES = {
    "contended": "after each arm, decode every example timed while other processes or "
    f"virtual machines took more than {100 * CONTENDED_SHARE:g}% of the CPU again, until a "
    "clean pass, and keep that pass's timings (the first pass's output and scores stay)",
    "none": "keep every first pass's timings, contended or not",
}
RetimeOpt = Annotated[
    str | None,
    typer.Option(
        "--retime",
        metavar="WHEN",
        help=f"Re-timing: {listing(RETIME_MODES, RETIME_NOTES)} (default: contended).",
    ),
]
RetimeMaxOpt = Annotated[
    int | None,
    typer.Option(
        "--retime-max",
        metavar="N",
        min=1,
        help="Decode a contended example again at most this many times "
        f"(default: {DEFAULT_RETIME_MAX}).",
    ),
]


def check_retime(value: str) -> str:
    if value not in RETIME_MODES:
        raise UserError(f"--retime: {value!r} is not one of: {', '.join(RETIME_MODES)}")
    return value


ResumeOpt = Annotated[
    Path | None,
    typer.Option(
        "--resume",
        metavar="RUN_DIR",
        help="Continue the unfinished run in this folder with its stored settings: "
        "complete examples are kept, the missing ones and those a worker crash or "
        "timeout lost are run. Refused if the model, dataset or settings differ.",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        min=0.1,
        help="Seconds of wall clock one example may take; past it the worker is "
        "killed, the example recorded as a timeout and a fresh worker goes on "
        "(default: no limit).",
    ),
]
PowerCommandOpt = Annotated[
    str | None,
    typer.Option(
        "--power-command",
        metavar="CMD",
        help="A command that prints the watts a meter reads now, polled once a second "
        "into the timeline, e.g. 'python read_ina219.py'; run without a shell (write "
        "sh -c '...' for one); --resume needs it given again (default: the machine's "
        "own sensor, when one is readable).",
    ),
]
PowerLogOpt = Annotated[
    Path | None,
    typer.Option(
        "--power-log",
        metavar="FILE",
        help="A CSV of time,watts a USB power meter, smart plug or INA219 logger writes "
        "during the run (time: unix seconds or ISO 8601), read when the run ends and "
        "aligned with the examples by time.",
    ),
]
IdleBaselineOpt = Annotated[
    float | None,
    typer.Option(
        "--idle-baseline",
        metavar="SECONDS",
        min=0.0,
        help="Seconds of idle power measured before the first arm, no model running; "
        "subtracted from every example's energy (0: none; default: 5).",
    ),
]
TimelineOpt = Annotated[
    bool | None,
    typer.Option(
        "--timeline/--no-timeline",
        help="Sample temperature, clocks, throttling and power once a second into "
        "timeline.jsonl (--no-timeline: measure without it; default: on).",
    ),
]
CompileTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--compile-timeout",
        metavar="SECONDS",
        min=0.1,
        help="Seconds one schema may take to compile under one constraint engine; past "
        "it the worker is killed, the schema recorded as unsupported with the reason "
        "(once: later examples of it are not compiled again) and a fresh worker goes on "
        f"(default: {DEFAULT_COMPILE_TIMEOUT:g}).",
    ),
]
MaxCrashesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-crashes",
        metavar="N",
        min=1,
        help="Give up on a constraint mode after this many examples in a row lost to "
        f"a worker crash or timeout (default: {DEFAULT_MAX_CRASHES}).",
    ),
]
IgnoreMemoryOpt = Annotated[
    bool,
    typer.Option(
        "--ignore-memory-check",
        help="Load the model even when the model file plus its KV cache exceeds "
        "the memory available.",
    ),
]

# Waiting on the machine (runner/cooling.py), on `run` and `bench` alike.
DEFAULT_WAIT_COOL_TIMEOUT = 600.0
_HOTTEST_C = 150.0  # no CPU runs hotter: a target above it is a typo
WaitCoolOpt = Annotated[
    float | None,
    typer.Option(
        "--wait-cool",
        metavar="CELSIUS",
        help="Before starting, wait until the CPU temperature (a CPU thermal zone or "
        "hwmon sensor) is below this, printing it as it falls; with no temperature "
        "readable it says so and starts at once. Recorded in the results.",
    ),
]
WaitCoolTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--wait-cool-timeout",
        metavar="SECONDS",
        min=1,
        help="Longest --wait-cool wait; past it the run starts anyway and says so "
        f"(default: {DEFAULT_WAIT_COOL_TIMEOUT:g}).",
    ),
]
DelayOpt = Annotated[
    float | None,
    typer.Option(
        "--delay",
        "--cooldown",
        metavar="SECONDS",
        min=0,
        help="Pause this long before each example but an arm's first, so the CPU cools "
        "between them (as llama-bench's --delay); outside every timing, but it lengthens "
        "the run's wall time (default: 0).",
    ),
]


def check_wait_cool(target: float | None) -> float | None:
    """`--wait-cool`: a temperature a CPU can be below, or a one-line error."""
    if target is not None and not 0 < target < _HOTTEST_C:
        raise UserError(
            f"--wait-cool {target:g}: give a temperature in °C between 0 and {_HOTTEST_C:g}"
        )
    return target


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smh]?)")


def parse_duration(text: str, option: str) -> float:
    """'90s', '10m', '1h', '1.5m' or plain seconds ('600') -> seconds above 0; anything
    else is a one-line error naming the option."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise UserError(
            f"{option} {text!r}: give a time such as 90s, 10m, 1h or plain seconds (600)"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if seconds <= 0:
        raise UserError(f"{option} {text!r}: must be longer than 0 seconds")
    return seconds


DeviceNameOpt = Annotated[
    str | None,
    typer.Option(
        "--device-name",
        metavar="NAME",
        help="What to call this device in results, e.g. pi5-kitchen: at most 64 characters, "
        "no '/' (default: $EDGEBENCH_DEVICE_NAME, else the hostname). Recorded with the "
        "device's fingerprint, which tells identical boards apart (docs: Device identity).",
    ),
]

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the results as JSON on stdout instead of tables.")
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        metavar="table|md|csv|json",
        help="What is printed on stdout: table (for a terminal), md (GitHub Markdown "
        "tables, to paste into a README or an issue), csv (with a header) or json (as "
        "--json).",
    ),
]

# `edgebench consistency`: what each prompt is sampled with.
_SAMPLES = "Generations per prompt and temperature (default: 5)."
_TEMPERATURES = "Sampling temperatures, comma-separated, above 0 (default: 0.2,0.5,0.8)."
_SEED = (
    "Seed of the first generation; generation i uses seed + i; also the seed of --sample "
    "(default: 0)."
)
_ONE_MODE = f"One constraint mode: {listing(tuple(MODES))} (default: none)."
# `edgebench run`: several modes, the closing arms too.
_CLOSING_NOTES = {arm: "closing cut-off answers" for arm in CLOSING_ARMS}
MODES_HELP = (
    "Constraint modes, several comma-separated, each run on the same examples: "
    f"{listing((*MODES, *CLOSING_ARMS), _CLOSING_NOTES)} (default: none)."
)
SamplesOpt = Annotated[
    int | None, typer.Option("--samples", "-s", metavar="N", min=2, help=_SAMPLES)
]
TemperaturesOpt = Annotated[
    str | None, typer.Option("--temperatures", metavar="T[,T]", help=_TEMPERATURES)
]
SeedOpt = Annotated[int | None, typer.Option("--seed", metavar="N", min=0, help=_SEED)]
ConsistencyConstraintOpt = Annotated[
    str | None, typer.Option("--constraint", "-c", metavar="MODE", help=_ONE_MODE)
]


def run_settings(options: dict[str, Any], resume: Path | None, **converted: Any) -> RunSettings:
    """The settings of a run from a command's options (its `locals()`: every option named
    like a RunSettings field counts, with `converted` ones on top; None means not given):
    a new run's, or with `--resume` the stored run's with the given ones on top (the
    engine refuses any that change what is measured)."""
    from edgebench.runfolder.read import MANIFEST, read_manifest
    from edgebench.runfolder.records import RunSettings
    from edgebench.runner.resume import settings_from_manifest

    names = {field.name for field in fields(RunSettings)}
    chosen = {name: value for name, value in options.items() if name in names}
    given = {name: value for name, value in {**chosen, **converted}.items() if value is not None}
    out = given.get("out")
    if resume is None:
        return RunSettings(**{"threads": default_threads(), **reference_pipeline(given)})
    if out is not None and out.resolve() != resume.resolve():
        raise UserError("give the run folder once: --resume DIR (not --out as well)")
    manifest = read_manifest(resume)
    check_stored_settings(manifest.settings, resume / MANIFEST)
    return settings_from_manifest(manifest, resume, given)


# What ends an answer in edgebench but not in a benchmark's published pipeline (its
# scorer reads the whole answer the model gave): setting -> the option that turns it on.
_NOT_IN_REFERENCE = {"stop_at_json": "--stop-at-json", "loop_detection": "--loop-detection"}
_OWN = {"parse": "--parse lenient", "prompt": "--prompt default"}


def reference_pipeline(given: dict[str, Any]) -> dict[str, Any]:
    """`--parse reference` or `--prompt reference` on a task with a published scorer is
    that benchmark's pipeline end to end: the answer-ending policies it lacks are off (and
    so recorded in the settings), so its scorer reads the whole answer; asking for one as
    well is a one-line error."""
    from edgebench.runfolder.records import RunSettings
    from edgebench.scoring.extract import LENIENT, extraction_for
    from edgebench.tasks import reference_of

    task = given.get("task", RunSettings.task)
    chosen = [name for name in ("parse", "prompt") if given.get(name) == "reference"]
    if not chosen or extraction_for("reference", reference_of(task)) is LENIENT:
        return given
    for name, flag in _NOT_IN_REFERENCE.items():
        if given.get(name):
            raise UserError(
                f"{flag}: --{chosen[0]} reference runs the benchmark's own pipeline, which "
                f"has no such policy (drop {flag}, or use {_OWN[chosen[0]]} for "
                "edgebench's own pipeline)"
            )
    return {**given, **dict.fromkeys(_NOT_IN_REFERENCE, False)}


def _minimum(option: Any) -> Any:
    return get_args(option)[1].min


# Settings a manifest stores, with the option that sets them (and its minimum).
_RANGED = {
    "threads": ThreadsOpt,
    "max_tokens": MaxTokensOpt,
    "n_ctx": NCtxOpt,
    "max_context": MaxContextOpt,
    "limit": LimitOpt,
    "close_tokens": CloseTokensOpt,
    "timeout": TimeoutOpt,
    "max_crashes": MaxCrashesOpt,
    "delay": DelayOpt,
    "wait_cool_timeout": WaitCoolTimeoutOpt,
    "retime_max": RetimeMaxOpt,
}


def check_stored_settings(settings: RunSettings, path: Path) -> None:
    """A hand-edited manifest setting that has the right type but a value its option
    refuses: a one-line error naming the file and the field (the types are checked when
    the manifest is read)."""
    from edgebench.scoring.extract import check_parse_mode

    for name, option in _RANGED.items():
        value, minimum = getattr(settings, name), _minimum(option)
        if value is not None and value < minimum:
            raise UserError(f"{path}: settings.{name}: {value} is below the minimum of {minimum}")
    if settings.sample is not None and settings.sample < 1:
        raise UserError(f"{path}: settings.sample: {settings.sample} is below the minimum of 1")
    checks = (("parse", check_parse_mode), ("wait_cool", check_wait_cool), ("retime", check_retime))
    for name, check in checks:
        try:
            check(getattr(settings, name))
        except UserError as exc:
            raise UserError(f"{path}: settings.{name}: {exc}") from None


def parse_int_list(text: str, option: str, minimum: int) -> tuple[int, ...]:
    """'1,2,4' -> (1, 2, 4), in the order given without repeats; a bad item is a
    one-line error naming the option."""
    items = [part.strip() for part in text.split(",") if part.strip()]
    if not items:
        raise UserError(f"{option}: give at least one number")
    values = []
    for item in items:
        try:
            value = int(item)
        except ValueError:
            raise UserError(f"{option}: '{item}' is not a whole number") from None
        if value < minimum:
            raise UserError(f"{option}: {value} is below the minimum of {minimum}")
        values.append(value)
    return tuple(dict.fromkeys(values))
