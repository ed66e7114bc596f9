"""What cards and HTML reports say about a run, as plain rows of (label, value): the
leaderboard columns, the device, the model, how the run was made. Both renderers take
these rows and escape every value in their own format."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgebench.analysis.figures import metric_label
from edgebench.analysis.rundata import ArmView, LoadedRun, flatten
from edgebench.runfolder.records import ArmSummary, Distribution, Manifest, Perf, Summary
from edgebench.runtimes import label_of, version_of
from edgebench.scoring.extract import describe_parse
from edgebench.summary.uncertainty import INDICATIVE_N
from edgebench.system.records import Device
from edgebench.tasks import reference_of

Figure = Callable[[ArmSummary], float | int | None]
# Every table's cell for "no value" (a group whose examples were all skipped, a figure a
# run does not have): never 0.
NO_VALUE = "—"
# Beside `n` (the examples scored) in every accuracy table: what was not scored.
SKIPPED_LABEL = "skipped"
INVALID_DATA_LABEL = "invalid data"
TTFT_KEY = "perf.ttft_s.p50"

# (label, key (the page's sort key), how to read it from one arm's summary, digits):
# speed and memory.
PERF_COLUMNS: tuple[tuple[str, str, Figure, int], ...] = (
    ("TTFT p50 (s)", TTFT_KEY, lambda a: a.perf.ttft_s.p50, 3),
    ("prefill tok/s p50", "perf.prefill_tok_s.p50", lambda a: a.perf.prefill_tok_s.p50, 1),
    ("decode tok/s p50", "perf.decode_tok_s.p50", lambda a: a.perf.decode_tok_s.p50, 1),
    ("decode × none", "decode_ratio_to_none", lambda a: a.decode_ratio_to_none, 2),
    ("decode tok/s p95", "perf.decode_tok_s.p95", lambda a: a.perf.decode_tok_s.p95, 1),
    ("latency p50 (s)", "perf.latency_s.p50", lambda a: a.perf.latency_s.p50, 2),
    ("latency p95 (s)", "perf.latency_s.p95", lambda a: a.perf.latency_s.p95, 2),
    ("peak RSS (MiB)", "perf.peak_rss_mb", lambda a: a.perf.peak_rss_mb, 0),
    ("load (s)", "perf.load_s", lambda a: a.perf.load_s, 2),
    ("closed", "perf.closed", lambda a: a.perf.closed, 0),
    ("wall (s)", "perf.wall_s", lambda a: a.perf.wall_s, 0),
)
# Which way a cost figure is better, by PERF_COLUMNS key (absent: neither way).
HIGHER_IS_BETTER = {
    TTFT_KEY: False,
    "perf.prefill_tok_s.p50": True,
    "perf.decode_tok_s.p50": True,
    "decode_ratio_to_none": True,
    "perf.decode_tok_s.p95": True,
    "perf.latency_s.p50": False,
    "perf.latency_s.p95": False,
    "perf.peak_rss_mb": False,
    "perf.load_s": False,
    "perf.wall_s": False,
}
# The PERF_COLUMNS with a 95% interval, and how to read it from one arm's summary: the
# p50s (Perf.p50_ci95) and the paired decode ratio to `none`.
PERF_INTERVALS: dict[str, Callable[[ArmSummary], list[float] | None]] = {
    TTFT_KEY: lambda a: a.perf.p50_ci95.get("ttft_s"),
    "perf.prefill_tok_s.p50": lambda a: a.perf.p50_ci95.get("prefill_tok_s"),
    "perf.decode_tok_s.p50": lambda a: a.perf.p50_ci95.get("decode_tok_s"),
    "decode_ratio_to_none": lambda a: a.perf.decode_ratio_to_none_ci95,
    "perf.latency_s.p50": lambda a: a.perf.p50_ci95.get("latency_s"),
}
BETTER_MARKS = {True: "↑", False: "↓"}
DIRECTION_LEGEND = "↓ lower is better, ↑ higher is better (every accuracy figure: higher)."


def with_direction(label: str, higher_is_better: bool | None) -> str:
    """ "peak RSS (MiB) ↓": a cost header that says which way is better."""
    return label if higher_is_better is None else f"{label} {BETTER_MARKS[higher_is_better]}"


# The leaderboard's first screen: the cost of a row at a glance (the rest of
# PERF_COLUMNS sits behind the page's column chooser).
FIRST_SCREEN_PERF = (
    TTFT_KEY,
    "perf.decode_tok_s.p50",
    "perf.latency_s.p50",
    "perf.peak_rss_mb",
)


def device_summary(device: Device) -> str:
    """ "AMD EPYC · 24 GB · VM · 2 threads" for a table cell: the device_label facts
    with each number kept next to its unit, threads last (the column is narrow)."""
    ram = ram_label(device.ram_total_mb)
    parts = [
        cpu_label(device),
        ram.replace(" ", "\u00a0") if ram else None,  # never split from its unit
        "VM" if device.hypervisor else None,
        f"{device.threads_used}\u00a0threads" if device.threads_used else None,
    ]
    return " · ".join(p for p in parts if p)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v, digits) for v in value)
    return str(value)


# Shown wherever a table holds an arm scored on fewer examples than INDICATIVE_N.
INDICATIVE = f"n < {INDICATIVE_N}: indicative only"
INTERVAL_NOTE = (
    "[lo, hi]: 95% bootstrap interval (2,000 resamples of the examples, seed 0), of a rate "
    "or of a p50; a difference's interval and decode × none's are paired: both arms' "
    "figures on the same resampled examples."
)


def indicative(n: int | None) -> bool:
    """Too few examples for a figure to be more than indicative."""
    return n is not None and 0 < n < INDICATIVE_N


def interval_text(interval: list[float] | None, digits: int = 2) -> str:
    """ "[0.30, 0.70]"; empty with no interval."""
    if not interval:
        return ""
    lo, hi = interval
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def perf_interval(arm: ArmSummary, key: str, digits: int) -> str:
    """ "[41.2, 52.3]": the 95% interval of a PERF_COLUMNS figure; empty without one."""
    read = PERF_INTERVALS.get(key)
    return interval_text(read(arm) if read is not None else None, max(digits, 1))


def signed(value: float, digits: int = 3) -> str:
    return f"{value:+.{digits}f}"


DIFFERENCE_HEADERS = ["model", "difference", "metric", "n", "value", "95% interval"]


def difference_rows(summary: Summary, digits: int = 3) -> list[list[str]]:
    """The summary's paired differences as table rows (headers: DIFFERENCE_HEADERS), n
    marked when indicative."""
    return [
        [
            d.base_model if d.base_model == d.other_model else d.other_constraint,
            d.label,
            metric_label(d.metric),
            f"{d.n}*" if indicative(d.n) else str(d.n),
            signed(d.difference, digits),
            interval_text([round(v, digits) for v in d.ci95], digits),
        ]
        for d in summary.differences
    ]


def metric_names(arms: list[ArmView]) -> list[str]:
    """Every accuracy figure any arm has, in first-seen order."""
    names: dict[str, None] = {}
    for arm in arms:
        names.update(dict.fromkeys(arm.metrics))
    return list(names)


def warm(text: str, perf: Perf, key: str = TTFT_KEY) -> str:
    """A TTFT figure marked warm when a prefix cache served part of the prompts."""
    return f"{text} (warm)" if key == TTFT_KEY and perf.ttft_warm else text


def distributions(perf: Perf) -> list[tuple[str, Distribution, list[float] | None]]:
    """The p50/p95 distributions of a perf block, labelled with their units, each with
    its p50's 95% interval."""
    ci = perf.p50_ci95
    return [
        ("ttft warm (s)" if perf.ttft_warm else "ttft (s)", perf.ttft_s, ci.get("ttft_s")),
        ("latency (s)", perf.latency_s, ci.get("latency_s")),
        ("prefill (tokens/s)", perf.prefill_tok_s, ci.get("prefill_tok_s")),
        ("decode (tokens/s)", perf.decode_tok_s, ci.get("decode_tok_s")),
    ]


def public_path(text: str) -> str:
    """A local absolute path as its last part (`/root/.cache/m.gguf` -> `m.gguf`), also
    as an option's value (`--out=/tmp/runs` -> `--out=runs`); any other text as it is."""
    option, equals, value = text.partition("=")
    if equals and option.startswith("-"):
        return f"{option}={public_path(value)}"
    return Path(text).name or text if text.startswith(("/", "~")) else text


def command_line(manifest: Manifest, local_paths: bool = True) -> str:
    """The command that made the run, as a user would type it; without `local_paths`,
    absolute paths shortened to their last part."""
    argv = [str(a) for a in manifest.command]
    if not argv:
        return "-"
    program = argv[0]
    if program.endswith(("edgebench/__main__.py", "-m")):
        head = ["python", "-m", "edgebench"]
    elif Path(program).name == "edgebench":
        head = ["edgebench"]
    else:
        head = [program if local_paths else public_path(program)]
    args = argv[1:] if local_paths else [public_path(a) for a in argv[1:]]
    return shlex.join(head + args)


def runtime_of(run: LoadedRun, label: str | None = None) -> dict[str, Any]:
    """The runtime the first arm loaded (llama.cpp build, system info, threads); with
    `label`, the first arm of that model (a multi-model run mixes runtimes)."""
    for arm in run.manifest.arms:
        if (label is None or arm.model == label) and arm.runtime is not None:
            return arm.runtime
    return {}


def arm_runtime(result: ArmSummary) -> str | None:
    """ "llama.cpp": the runtime that decoded the arm, as people name it (a runtime this
    edgebench does not know by its recorded name); None when the summary does not say."""
    return label_of(result.runtime) if result.runtime else None


def runtime_cell(result: ArmSummary) -> str:
    """The arm's runtime in a table; NO_VALUE when the summary does not say."""
    return arm_runtime(result) or NO_VALUE


def engine_cell(result: ArmSummary) -> str:
    """ "llguidance": the engine that enforced the arm's mode ("-" for none) in a table;
    NO_VALUE for a skipped arm or one whose engine is not known."""
    return result.engine or NO_VALUE


def runtime_label(runtime: dict[str, Any]) -> str | None:
    """ "llama.cpp 0.3.36" or "onnxruntime 1.31.1": the runtime's name and version."""
    version = version_of(runtime)
    return " ".join(str(v) for v in (runtime.get("name"), version) if v) or None


def ram_label(megabytes: int | None) -> str | None:
    """ "24 GB", "3.8 GB": RAM as a reader says it."""
    if megabytes is None:
        return None
    gigabytes = megabytes / 1024
    return f"{gigabytes:.0f} GB" if gigabytes >= 10 else f"{gigabytes:.1f} GB"


def cpu_label(device: Device) -> str:
    """ "AMD EPYC", or "Raspberry Pi 5 Model B Rev 1.0 (Cortex-A76)" with a board."""
    cpu = device.cpu_model or device.machine or "unknown CPU"
    return f"{device.board_model} ({cpu})" if device.board_model else cpu


def device_label(device: Device, threads: bool = True) -> str:
    """The device in one line: "AMD EPYC · 2 threads · 24 GB RAM · VM"."""
    ram = ram_label(device.ram_total_mb)
    parts = [
        cpu_label(device),
        f"{device.threads_used} threads" if threads and device.threads_used else None,
        f"{ram} RAM" if ram else None,
        "VM" if device.hypervisor else None,
    ]
    return " · ".join(p for p in parts if p)


# The device block's fields that describe its runtime build (llama.cpp's CPU features,
# parsed from its system info), not the machine: shown with that runtime.
BUILD_FIELDS = ("build_features", "build_missing", "build_hint")


def _device_build(run: LoadedRun) -> dict[str, Any]:
    """The device block's runtime build (the first model's to load) with its parsed
    CPU features, as `runtime.*` and the build fields."""
    device = flatten(run.manifest.device.to_json())
    return {k: v for k, v in device.items() if k.startswith("runtime.") or k in BUILD_FIELDS}


def builds_on_device(run: LoadedRun, label: str | None = None) -> bool:
    """Whether the device block's runtime build is this model's own runtime's: false in a
    run of several runtimes for a model whose runtime did not load first."""
    build = run.manifest.device.runtime
    runtime = runtime_of(run, label)
    if build is None or not runtime:
        return True
    if "build" in runtime:
        return runtime["build"] == build
    return runtime.get("name") == build.get("name")  # an arm that recorded no build


def runtime_rows(run: LoadedRun, label: str | None = None) -> list[tuple[str, Any]]:
    """The model's own runtime first: its name, version and settings, then its build
    (each once; the device block's when that is its build)."""
    runtime = runtime_of(run, label)
    rows = {f"runtime.{k}": v for k, v in runtime.items() if k not in ("constraint_mode", "build")}
    if builds_on_device(run, label):
        build = _device_build(run)
    else:
        build = flatten(runtime.get("build") or {}, "runtime.")
    return list((rows | {k: v for k, v in build.items() if k not in rows}).items())


def engine_rows(run: LoadedRun, label: str) -> list[tuple[str, Any]]:
    """ "engine · mask": the engine that enforced each of the model's modes, versioned."""
    return [
        (
            f"engine · {arm.constraint}",
            " ".join(str(v) for v in (arm.engine, arm.engine_version) if v),
        )
        for arm in run.summary.arms
        if arm.model == label and arm.engine
    ]


def machine_rows(run: LoadedRun, label: str | None = None) -> list[tuple[str, Any]]:
    """Every other fact of the manifest's device block (nested ones as `a.b`); another
    runtime's build (a run of several runtimes) under its name, "llama.cpp build on this
    device · system_info", never as this model's; then the packages that did the work."""
    build = _device_build(run)
    rows = [(k, v) for k, v in flatten(run.manifest.device.to_json()).items() if k not in build]
    if not builds_on_device(run, label):
        title = f"{device_runtime_label(run)} build on this device"
        rows += [(f"{title} · {k.removeprefix('runtime.')}", v) for k, v in build.items()]
    rows += [(f"package.{k}", v) for k, v in run.manifest.packages.items()]
    return rows


def device_runtime_label(run: LoadedRun) -> str:
    """ "llama.cpp": the runtime whose build the device block holds (the arm that
    recorded it, else the build's own name)."""
    build = run.manifest.device.runtime or {}
    for arm in run.manifest.arms:
        if arm.runtime and arm.runtime.get("build") == build:
            return label_of(run.manifest.model(arm.model).backend)
    return str(build.get("name") or "another runtime")


def device_rows(run: LoadedRun, label: str | None = None) -> list[tuple[str, Any]]:
    """The model's runtime (`runtime_rows`), then the device and packages (`machine_rows`)."""
    return runtime_rows(run, label) + machine_rows(run, label)


def model_rows(run: LoadedRun, label: str) -> list[tuple[str, Any]]:
    """What the manifest says about the model, prompt format and plan aside."""
    record = run.manifest.model(label).to_json()
    return [
        (k, v) for k, v in flatten(record).items() if not k.startswith(("prompt_format.", "plan."))
    ]


def prompt_templates(run: LoadedRun, label: str) -> list[tuple[str, str]]:
    """(name, text) of each template the model's prompts were rendered with, shown as
    code: the chat template from the model file, the completion template."""
    prompt_format = run.manifest.model(label).prompt_format
    templates = (
        ("chat_template", prompt_format.chat_template),
        ("template", prompt_format.template),
    )
    return [(name, text) for name, text in templates if text]


def examples_run(run: LoadedRun) -> int:
    """The examples the run decoded (each once per arm and draw)."""
    return len({s.id for s in run.samples})


def parse_label(run: LoadedRun) -> str:
    """How the scored JSON was taken from the answers: `lenient`, or `reference (NAME)`."""
    task = run.manifest.task.name
    return describe_parse(run.manifest.settings.parse, task, reference_of(task))


# What each `--prompt` style is, for the title over the task's prompt template.
PROMPT_STYLE_NOTES = {
    "default": "edgebench's own prompt",
    "reference": "the benchmark's own published prompt",
}


def task_prompt_title(run: LoadedRun) -> str:
    """ "Task prompt template · style reference (the benchmark's own published prompt)"."""
    style = run.manifest.task.prompt_style
    note = PROMPT_STYLE_NOTES.get(style)
    return f"Task prompt template · style {style}" + (f" ({note})" if note else "")


def dataset_rows(run: LoadedRun) -> list[tuple[str, Any]]:
    return [
        ("task", run.manifest.task.name),
        ("JSON extraction (--parse)", parse_label(run)),
        ("task prompt style", run.manifest.task.prompt_style),
        *flatten(run.manifest.dataset.to_json()).items(),
        ("examples run", examples_run(run)),
    ]


def decoding_rows(run: LoadedRun, label: str | None = None) -> list[tuple[str, Any]]:
    """The decoding plan of the model (the first one by default) and every setting."""
    model = run.manifest.model(label) if label else run.manifest.models[0]
    rows: list[tuple[str, Any]] = []
    if model.plan is not None:
        decoding = model.plan.decoding.to_json()
        by_schema = decoding.pop("max_tokens_by_schema", None)
        rows += [("n_ctx", model.plan.n_ctx), *flatten(decoding).items()]
        if by_schema:
            budgets = ", ".join(f"{k} {v}" for k, v in by_schema.items())
            rows.append(("max_tokens by schema", budgets))
    rows += [(f"setting.{k}", v) for k, v in run.manifest.settings.to_json().items()]
    return rows


def run_rows(run: LoadedRun) -> list[tuple[str, Any]]:
    manifest = run.manifest
    git = manifest.git
    return [
        ("run", run.run_id),
        ("status", manifest.status),
        ("started", manifest.started_at),
        ("finished", manifest.finished_at),
        ("wall (s)", manifest.wall_s),
        ("edgebench git commit", git.commit if git else None),
        ("working tree dirty", git.dirty if git else None),
        # --wait-cool: how each session waited for the CPU, in the line it printed
        *(("wait-cool", waited.message) for waited in manifest.wait_cool),
    ]


def dataset_label(run: LoadedRun) -> str:
    """`edgejson · test.jsonl (20 of 200 examples)`."""
    dataset = run.manifest.dataset
    name = Path(dataset.path or "dataset").name
    total, used = dataset.n_examples, examples_run(run)
    count = f"{used} of {total} examples" if total and used != total else f"{used} examples"
    return f"{run.manifest.task.name} · {name} ({count})"


def dataset_split(run: LoadedRun) -> str:
    """The split a dataset file stands for: its stem (test, train, validation ...)."""
    return Path(run.manifest.dataset.path or "test").stem or "test"
