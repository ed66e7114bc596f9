"""What cards and HTML reports say about a run, as plain rows of (label, value): the
leaderboard columns, the device, the model, how the run was made. Both renderers take
these rows and escape every value in their own format."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from edgebench.report.rundata import Arm, RunFolder, dig, flatten, model_record, numeric_metrics

METRIC_LABELS = {
    "json_exact": "JSONExact",
    "field_f1": "Field F1",
    "field_precision": "Precision",
    "field_recall": "Recall",
    "schema_compliance": "Schema",
    "valid_json": "Valid JSON",
    "syntax": "Syntax",
    "key_matching": "Key match",
    "strict": "Strict",
    "csa": "CSA",
    "nted": "NTED",
    "sted": "STED",
    "sted_structural": "STED struct",
    "sted_semantic": "STED sem",
    "schema_validation_accuracy": "Schema valid",
    "fma_exact": "FMA",
    "fma_fuzzy": "FMA fuzzy",
    "fsma_exact": "FSMA",
    "fsma_fuzzy": "FSMA fuzzy",
}

# (label, path in one arm's summary, digits): speed and memory, p50 over examples.
PERF_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("TTFT p50 (s)", "perf.ttft_s.p50", 3),
    ("prefill tok/s p50", "perf.prefill_tok_s.p50", 1),
    ("decode tok/s p50", "perf.decode_tok_s.p50", 1),
    ("decode tok/s p95", "perf.decode_tok_s.p95", 1),
    ("latency p50 (s)", "perf.latency_s.p50", 2),
    ("latency p95 (s)", "perf.latency_s.p95", 2),
    ("peak RSS (MB)", "perf.peak_rss_mb", 0),
    ("load (s)", "perf.load_s", 2),
)

# Units of the distributions in a `perf` block, by key suffix; others are shown bare.
_DISTRIBUTION_UNITS = {"_tok_s": "tokens/s", "_s": "s", "_mb": "MB"}


def metric_label(name: str) -> str:
    family, _, metric = name.rpartition(".")
    label = METRIC_LABELS.get(metric, metric)
    return f"{family} {label}" if family else label


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, list):
        return ", ".join(fmt(v, digits) for v in value)
    return str(value)


def metric_names(arms: list[Arm]) -> list[str]:
    """Every accuracy metric any arm has, in first-seen order."""
    names: dict[str, None] = {}
    for arm in arms:
        names.update(dict.fromkeys(numeric_metrics(arm.result.get("metrics") or {})))
    return list(names)


def perf_value(arm: Arm, path: str) -> float | None:
    value = dig(arm.result, path)
    return float(value) if isinstance(value, int | float) else None


def distributions(perf: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every p50/p95 distribution in a perf block (TTFT, latency, tokens/s ...), labelled
    with its unit."""
    rows = []
    for key, value in perf.items():
        if isinstance(value, dict) and "p50" in value:
            unit = next(
                (u for suffix, u in _DISTRIBUTION_UNITS.items() if key.endswith(suffix)), ""
            )
            name = key.removesuffix("_tok_s").removesuffix("_s").removesuffix("_mb")
            rows.append((f"{name} ({unit})" if unit else key, value))
    return rows


def command_line(manifest: dict[str, Any]) -> str:
    """The command that made the run, as a user would type it."""
    argv = [str(a) for a in manifest.get("command") or []]
    if not argv:
        return "-"
    program = argv[0]
    if program.endswith(("edgebench/__main__.py", "-m")):
        head = ["python", "-m", "edgebench"]
    elif Path(program).name == "edgebench":
        head = ["edgebench"]
    else:
        head = [program]
    return shlex.join(head + argv[1:])


def runtime_of(run: RunFolder, label: str | None = None) -> dict[str, Any]:
    """The runtime the first arm loaded (llama.cpp build, system info, threads); with
    `label`, the first arm of that model (a multi-model run mixes runtimes)."""
    for arm in (run.manifest.get("arms") or {}).values():
        if label is not None and isinstance(arm, dict) and arm.get("model", label) != label:
            continue
        if isinstance(arm, dict) and isinstance(arm.get("runtime"), dict):
            return arm["runtime"]
    return {}


def runtime_label(runtime: dict[str, Any]) -> str | None:
    """ "llama.cpp 0.3.36" or "onnxruntime 1.31.1": the runtime's name and version."""
    version = runtime.get("llama_cpp_python") or runtime.get("onnxruntime")
    return " ".join(str(v) for v in (runtime.get("name"), version) if v) or None


def device_rows(run: RunFolder, label: str | None = None) -> list[tuple[str, Any]]:
    """Every fact of the manifest's device block (nested ones as `a.b`), then the
    runtime and the packages that did the work."""
    rows = list(flatten(run.manifest.get("device") or {}).items())
    shown = {name for name, _ in rows}
    # The arm's runtime record repeats the device block's `runtime` (its `build`): once.
    rows += [
        (f"runtime.{k}", v)
        for k, v in runtime_of(run, label).items()
        if k not in ("constraint_mode", "build") and f"runtime.{k}" not in shown
    ]
    rows += [(f"package.{k}", v) for k, v in (run.manifest.get("packages") or {}).items()]
    return rows


def model_rows(run: RunFolder, label: str) -> list[tuple[str, Any]]:
    """What the manifest says about the model, prompt format aside (shown as code)."""
    record = model_record(run.manifest, label)
    return [(k, v) for k, v in flatten(record).items() if not k.startswith("prompt_format.")]


def dataset_rows(run: RunFolder) -> list[tuple[str, Any]]:
    dataset = run.manifest.get("dataset") or {}
    return [
        ("task", dig(run.manifest, "task.name")),
        *flatten(dataset).items(),
        ("examples run", run.summary.get("n_examples")),
    ]


def decoding_rows(run: RunFolder) -> list[tuple[str, Any]]:
    decoding = dict(run.manifest.get("decoding") or {})
    by_schema = decoding.pop("max_tokens_by_schema", None)
    rows = list(flatten(decoding).items())
    if isinstance(by_schema, dict) and by_schema:
        rows.append(("max_tokens by schema", ", ".join(f"{k} {v}" for k, v in by_schema.items())))
    settings = run.manifest.get("settings") or {}
    rows += [(f"setting.{k}", v) for k, v in settings.items()]
    return rows


def run_rows(run: RunFolder) -> list[tuple[str, Any]]:
    manifest = run.manifest
    git = manifest.get("git") or {}
    return [
        ("run", run.run_id),
        ("status", manifest.get("status")),
        ("started", manifest.get("started_at")),
        ("finished", manifest.get("finished_at")),
        ("wall (s)", manifest.get("wall_s")),
        ("edgebench git commit", git.get("commit")),
        ("working tree dirty", git.get("dirty")),
    ]


def dataset_label(run: RunFolder) -> str:
    """`edgejson · test.jsonl (20 of 200 examples)`."""
    dataset = run.manifest.get("dataset") or {}
    task = dig(run.manifest, "task.name") or run.summary.get("task") or "task"
    name = Path(str(dataset.get("path") or "dataset")).name
    total, used = dataset.get("n_examples"), run.summary.get("n_examples")
    count = f"{used} of {total} examples" if total and used != total else f"{used} examples"
    return f"{task} · {name} ({count})"


def dataset_split(run: RunFolder) -> str:
    """The split a dataset file stands for: its stem (test, train, validation ...)."""
    return Path(str(dig(run.manifest, "dataset.path") or "test")).stem or "test"
