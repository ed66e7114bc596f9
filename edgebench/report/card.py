"""`edgebench card`: a Hugging Face model card for one model of a run folder.

The YAML metadata is built with huggingface_hub's card classes (`ModelCardData`,
`EvalResult`), so the `model-index` is the one the Hub reads: one result for the task
and dataset, its metrics per constraint mode (accuracy and what it cost). The Markdown
body says on which device, with which runtime, command, dataset and prompt, and shows
accuracy, speed, memory and plots. Every string from the run is escaped (markdown.py).

A card is published: it names no local path (a model file by its name, sha256 and size;
the user's home folder never), its headline table holds the key figures only (accuracy
and decode speed with their intervals, TTFT, peak RSS) and the machine's detail is
collapsed.

Speed goes into model-index only for a mode whose speed is clean (no example contended,
`perf.speed_clean`); the others get a line in the body saying why, unless
`--allow-contended` (then the line says it was published anyway).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from edgebench import __version__
from edgebench.analysis.figures import metric_label
from edgebench.analysis.recommend import recommend
from edgebench.analysis.rundata import ArmView, LoadedRun, arms, numeric, sample_scores
from edgebench.analysis.sweep import build_sweep, is_sweep, pick_metric
from edgebench.errors import UserError
from edgebench.io import json_line, write_bytes_atomic, write_text_atomic
from edgebench.report import coverage, energy, facts
from edgebench.report import markdown as md
from edgebench.report.plots import Plot, all_plots, count_range
from edgebench.report.recommend_view import DEVICE_HEADERS, DEVICES_TITLE, device_note, device_rows
from edgebench.report.sweep_plot import NAME as SWEEP_PLOT
from edgebench.report.sweep_plot import sweep_plots
from edgebench.report.sweep_view import sweep_markdown
from edgebench.runfolder.identity import device_tag, identity_of
from edgebench.runfolder.records import ArmSummary, ModelRecord
from edgebench.runtimes import runtime_info

TASK_TYPE = "text-generation"
# model-index metric types for what a mode cost, from one arm's summary.
COST_METRICS: tuple[tuple[str, facts.Figure, str], ...] = (
    ("decode_tokens_per_second_p50", lambda a: a.perf.decode_tok_s.p50, "decode tokens/s p50"),
    ("prefill_tokens_per_second_p50", lambda a: a.perf.prefill_tok_s.p50, "prefill tokens/s p50"),
    ("time_to_first_token_seconds_p50", lambda a: a.perf.ttft_s.p50, "TTFT p50 (s)"),
    ("latency_seconds_p50", lambda a: a.perf.latency_s.p50, "latency p50 (s)"),
    ("peak_rss_mib", lambda a: a.perf.peak_rss_mb, "peak RSS (MiB)"),
    # energy, when a power source measured it (idle power subtracted)
    ("joules_per_decode_token", energy.ENERGY_COLUMNS[1][2], "J per decode token"),
    ("joules_per_answer", energy.ENERGY_COLUMNS[2][2], "J per answer"),
    ("joules_per_exact_answer", energy.ENERGY_COLUMNS[4][2], "J per exact answer"),
)
# The timed ones among them: published only for an arm whose speed is clean.
SPEED_METRICS = (
    "decode_tokens_per_second_p50",
    "prefill_tokens_per_second_p50",
    "time_to_first_token_seconds_p50",
    "latency_seconds_p50",
)


def _hub_library(backend: str) -> str | None:
    """The Hub's `library_name` for the runtime's model files (none for the fake)."""
    info = runtime_info(backend)
    return info.hub_library if info is not None else None


def speed_published(arm: ArmSummary, allow_contended: bool) -> bool:
    """An arm's speed goes into model-index when no example was contended (measured:
    `perf.speed_clean`), or when `--allow-contended` says to publish it anyway."""
    return allow_contended or arm.perf.speed_clean is True


def contention_line(arm: ArmSummary, allow_contended: bool) -> str | None:
    """Why an arm's speed is not in model-index (or is, though contended); None when clean."""
    perf = arm.perf
    if perf.speed_clean is True or not perf.latency_s.n:  # clean, or nothing was timed
        return None
    if perf.speed_clean is None:
        why = "contention was not measured in this run (recorded from format 2.9 on)"
    else:
        timed = perf.latency_s.n
        share = f" ({perf.contended_examples / timed:.0%})" if timed else ""
        why = (
            f"{perf.contended_examples} of {timed} examples{share} were contended (other "
            "processes or the hypervisor took CPU while they decoded)"
        )
    if allow_contended:
        return f"{arm.constraint}: speed published with --allow-contended, though {why}."
    return (
        f"{arm.constraint}: speed not published in model-index: {why}; "
        "edgebench card --allow-contended publishes it anyway."
    )


@dataclass(frozen=True)
class CardFiles:
    card: Path
    plots: list[Path]


def _hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise UserError(
            "model cards need huggingface_hub: pip install 'edgebench[report]'"
        ) from None
    return huggingface_hub


def pick_model(run: LoadedRun, model: str | None) -> str:
    labels = run.summary.models
    if model is None:
        if len(labels) > 1:
            raise UserError(
                f"{run.path}: the run holds {len(labels)} models ({', '.join(labels)}); "
                "choose one with --model"
            )
        return labels[0]
    if model not in labels:
        raise UserError(f"{run.path}: no model {model!r} in this run (it has {', '.join(labels)})")
    return model


def base_model(record: ModelRecord) -> str | None:
    """The Hub repo the weights come from: the manifest's, else the registry entry's."""
    if record.base_model:
        return record.base_model
    if not record.registry_name:
        return None
    from edgebench.models.registry import load_registry

    entry = load_registry().get(record.registry_name)
    return getattr(entry, "base_model", None) or None


def measured_on(run: LoadedRun, label: str | None = None) -> dict[str, Any]:
    """Where and how the numbers were measured, as a top-level `edgebench` block in the
    metadata, so a number read from the Hub keeps its device and runtime."""
    device = run.manifest.device
    identity = identity_of(device)
    runtime = facts.runtime_of(run, label)
    measured = {
        "tool": f"edgebench {run.manifest.packages.get('edgebench') or __version__}",
        "run": run.run_id,
        "device_name": identity.name,
        "device_fingerprint": identity.fingerprint,
        "device": device.cpu_model or device.machine,
        "threads": device.threads_used or runtime.get("n_threads"),
        "ram_total_mb": device.ram_total_mb,
        "os": device.os,
        "vm": device.hypervisor,
        "runtime": facts.runtime_label(runtime),
        "dataset_sha256": run.manifest.dataset.sha256,
        "examples": facts.examples_run(run),
    }
    return {k: v for k, v in measured.items() if v is not None}


def result_config(run: LoadedRun, label: str, constraint: str) -> str:
    """A result's `config`: the mode, runtime and device it was measured with, so a
    number read alone on the Hub keeps them: "constraint=mask; backend=llama.cpp 0.3.36;
    threads=2; quantization=Q4_1; device=AMD EPYC · 24 GB RAM · VM"."""
    record = run.manifest.model(label)
    runtime = facts.runtime_of(run, label)
    device = run.manifest.device
    config = {
        "constraint": constraint,
        "backend": facts.runtime_label(runtime) or record.backend,
        "threads": device.threads_used or runtime.get("n_threads"),
        "quantization": record.quantization,
        "device": facts.device_label(device, threads=False),
    }
    return "; ".join(f"{k}={v}" for k, v in config.items() if v is not None)


def eval_results(
    run: LoadedRun, model_arms: list[ArmView], allow_contended: bool = False
) -> list[Any]:
    """One EvalResult per metric and constraint mode: the accuracy metrics and the cost
    (speed, memory), named with the mode; `metric_config` holds the mode, runtime and
    device (`result_config`). Speed only for arms `speed_published` allows."""
    hub = _hub()
    task = run.manifest.task.name
    common = {
        "task_type": TASK_TYPE,
        "task_name": f"Structured JSON extraction ({task})",
        "dataset_type": task,
        "dataset_name": facts.dataset_label(run),
        "dataset_split": facts.dataset_split(run),
        "dataset_revision": run.manifest.dataset.sha256,
    }
    results = []
    for arm in model_arms:
        config = result_config(run, arm.model, arm.constraint)
        values = [(name, value, metric_label(name)) for name, value in arm.metrics.items()]
        published = speed_published(arm.result, allow_contended)
        values += [
            (t, _number(read(arm.result)), label)
            for t, read, label in COST_METRICS
            if published or t not in SPEED_METRICS
        ]
        for metric_type, value, label in values:
            if value is None:
                continue
            results.append(
                hub.EvalResult(
                    **common,
                    metric_type=metric_type,
                    metric_value=round(value, 4),
                    metric_name=f"{_warm_label(label, metric_type, arm)} ({arm.constraint})",
                    metric_config=config,
                )
            )
    return results


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def card_data(
    run: LoadedRun, label: str, model_arms: list[ArmView], allow_contended: bool = False
) -> Any:
    hub = _hub()
    record = run.manifest.model(label)
    tags = ["edgebench", "structured-output", "json-extraction", "cpu"]
    if record.quantization:
        tags.append(record.quantization)
    base = base_model(record)
    extra: dict[str, Any] = {"pipeline_tag": TASK_TYPE, "edgebench": measured_on(run, label)}
    if base:
        extra["base_model"] = base
        if record.quantization:
            extra["base_model_relation"] = "quantized"
    return hub.ModelCardData(
        model_name=label,
        license=record.license or None,
        library_name=_hub_library(record.backend),
        tags=tags,
        eval_results=eval_results(run, model_arms, allow_contended) or None,
        **extra,
    )


# A local absolute path inside a text: `/home/alice/m.gguf`, `~/runs/r1`, `--out=/tmp/r`:
# a `/` or `~` that starts a word or a value (not `tokens/s`, `</b>`, a URL's `//host`).
_LOCAL_PATH = re.compile(r"(?<![^\s=(\[\"'])(?:~|/)[^\s,;'\"()\[\]|]*")


def public_text(value: Any) -> Any:
    """A value with every local absolute path in it cut to its last part (the file or
    folder name): what a published card may say. Non-text values as they are."""
    if not isinstance(value, str):
        return value
    return _LOCAL_PATH.sub(lambda m: facts.public_path(m.group(0)), value)


def _kv_table(rows: list[tuple[str, Any]]) -> str:
    cells = [[k, facts.fmt(public_text(v))] for k, v in rows]
    return md.table(["", "value"], cells, align_right_from=2)


# The headline table's cost columns (facts.PERF_COLUMNS keys): what a reader compares first.
HEADLINE_PERF = ("perf.decode_tok_s.p50", facts.TTFT_KEY, "perf.peak_rss_mb")


def _headline_table(model_arms: list[ArmView]) -> str:
    """One row per constraint mode, the key figures only: the runtime and the engine that
    enforced the mode, the task's headline accuracy and decode tok/s p50 with their 95%
    intervals, TTFT p50, peak RSS. Every other figure is in the Accuracy and Performance
    sections."""
    metric = pick_metric(model_arms, None) if facts.metric_names(model_arms) else None
    perf = [column for key in HEADLINE_PERF for column in facts.PERF_COLUMNS if column[1] == key]
    headers = ["runtime", "constraint", "engine", "n"]
    headers += [f"{metric_label(metric)} ↑ (95% CI)"] if metric else []
    headers += [
        facts.with_direction(label, facts.HIGHER_IS_BETTER.get(k)) for label, k, _, _ in perf
    ]
    rows = []
    for arm in model_arms:
        result = arm.result
        row: list[Any] = [
            facts.runtime_cell(result),
            arm.constraint,
            facts.engine_cell(result),
            result.n_scored,
        ]
        if metric:
            interval = facts.interval_text(arm.intervals.get(metric))
            row.append(f"{facts.fmt(arm.metrics.get(metric))} {interval}".strip())
        row += [_perf_cell(arm, key, read, digits) for _, key, read, digits in perf]
        rows.append(row)
    return md.table(headers, rows, align_right_from=3)  # the labels, then figures


def _perf_cell(arm: ArmView, key: str, read: facts.Figure, digits: int) -> str:
    """A speed or memory figure with its interval when it has one (TTFT marked warm)."""
    value = facts.warm(facts.fmt(read(arm.result), digits), arm.result.perf, key)
    return " ".join(part for part in (value, facts.perf_interval(arm.result, key, digits)) if part)


def _accuracy_table(model_arms: list[ArmView]) -> str:
    """Every accuracy figure per constraint mode with its interval, and what was not scored."""
    metrics = facts.metric_names(model_arms)
    counts = ["n", facts.SKIPPED_LABEL, facts.INVALID_DATA_LABEL]
    headers = ["constraint", *counts, *(metric_label(m) for m in metrics)]
    rows = []
    for arm in model_arms:
        values, intervals, result = arm.metrics, arm.intervals, arm.result
        row: list[Any] = [
            arm.constraint,
            result.n_scored,
            result.n_skipped,
            arm.run.summary.n_invalid_data,
        ]
        row += [
            f"{facts.fmt(values.get(m))} {facts.interval_text(intervals.get(m))}".strip()
            for m in metrics
        ]
        rows.append(row)
    return md.table(headers, rows)


def _skipped(model_arms: list[ArmView]) -> list[str]:
    """One line per mode the runtime could not apply, with its reason."""
    return [
        f"> **Skipped**: {md.text(f'{arm.constraint}: {arm.result.skip_reason}')}"
        for arm in model_arms
        if arm.result.skip_reason
    ]


def _warning(model_arms: list[ArmView]) -> list[str]:
    """The sample-size warning, when an arm has fewer than 50 scored examples."""
    small = [a for a in model_arms if facts.indicative(a.result.n_scored)]
    if not small:
        return []
    n = min(a.result.n_scored for a in small)
    return [f"> **⚠ {facts.INDICATIVE}**: {n} examples scored; the intervals are wide."]


def _contention(model_arms: list[ArmView], allow_contended: bool) -> list[str]:
    """One line per arm whose speed was contended or not measured (module docstring)."""
    lines = [contention_line(arm.result, allow_contended) for arm in model_arms]
    return [f"> **Speed**: {md.text(line)}" for line in lines if line is not None]


def _differences(run: LoadedRun, label: str) -> list[str]:
    """Arm minus arm on the same examples, with paired intervals, for this model."""
    summary = run.summary
    mine = replace(
        summary,
        differences=[d for d in summary.differences if label in (d.base_model, d.other_model)],
    )
    rows = facts.difference_rows(mine)
    if not rows:
        return []
    table = md.table(facts.DIFFERENCE_HEADERS, rows, align_right_from=4)
    return [
        "### Differences on the same examples",
        f"{table}\n\n{md.text(facts.INTERVAL_NOTE)} n*: {md.text(facts.INDICATIVE)}.",
    ]


def _group_tables(model_arms: list[ArmView]) -> list[str]:
    names: dict[str, None] = {}
    for arm in model_arms:
        names.update(dict.fromkeys(arm.groups))
    metrics = facts.metric_names(model_arms)
    parts = []
    for name in names:
        rows = []
        for arm in model_arms:
            for value, scores in arm.groups.get(name, {}).items():
                flat = numeric(scores)
                rows.append(
                    [value, arm.constraint, scores.get("n"), scores.get("n_skipped", 0)]
                    + [facts.fmt(flat.get(m)) for m in metrics]
                )
        rows.sort(key=lambda r: str(r[0]))
        headers = [name, "constraint", "n", facts.SKIPPED_LABEL]
        headers += [metric_label(m) for m in metrics]
        parts.append(f"### By {md.text(name)}\n\n{md.table(headers, rows, align_right_from=2)}")
    return parts


def _coverage_table(model_arms: list[ArmView]) -> list[str]:
    """Schema-engine coverage per (constraint, subset); nothing without a schema engine."""
    rows = [
        [row["constraint"], row["group"]]
        + [facts.fmt(row[key], digits) for _, key, digits in coverage.COLUMNS]
        for arm in model_arms
        for row in coverage.arm_coverage_rows(arm.run.run_id, arm.result)
    ]
    if not rows:
        return []
    headers = ["constraint", "group", *(header for header, _, _ in coverage.COLUMNS)]
    return [f"### Schema engine coverage\n\n{md.table(headers, rows, align_right_from=2)}"]


def _warm_label(label: str, metric_type: str, arm: ArmView) -> str:
    warm = metric_type.startswith("time_to_first_token") and arm.result.perf.ttft_warm
    return f"{label}, warm" if warm else label


def _compile_ms(arm: ArmSummary) -> float | None:
    seconds = arm.compile.first_s.p50
    return seconds * 1000 if seconds is not None else None


def _perf_tables(model_arms: list[ArmView]) -> str:
    rows = []
    for arm in model_arms:
        for label, dist, interval in facts.distributions(arm.result.perf):
            rows.append(
                [arm.constraint, facts.with_direction(label, label.endswith("(tokens/s)"))]
                + [facts.fmt(dist.p50, 3), facts.interval_text(interval, 3) or facts.NO_VALUE]
                + [facts.fmt(v, 3) for v in (dist.p95, dist.mean)]
                + [dist.n]
            )
    headers = ["constraint", "measure", "p50", "p50 95% CI", "p95", "mean", "n"]
    speed = md.table(headers, rows, 2)
    totals = []
    for arm in model_arms:
        perf = arm.result.perf
        totals.append(
            [
                arm.constraint,
                facts.fmt(perf.load_s, 2),
                facts.fmt(perf.peak_rss_mb, 0),
                facts.fmt(perf.peak_rss_anon_mb, 0),
                facts.fmt(perf.peak_rss_file_mb, 0),
                perf.prompt_tokens_total,
                perf.output_tokens_total,
                perf.hit_token_limit,
                perf.stopped_at_json,
                perf.loops,
                perf.closed,
                perf.tokens_after_answer_total,
                _perf_cell(arm, "decode_ratio_to_none", lambda a: a.decode_ratio_to_none, 2),
                facts.fmt(_compile_ms(arm.result), 2),
                facts.fmt(perf.wall_s, 1),
            ]
        )
    lower = facts.BETTER_MARKS[False]
    headers = [
        "constraint",
        f"load (s) {lower}",
        f"peak RSS (MiB) {lower}",
        f"anon (MiB) {lower}",
        f"file-backed (MiB) {lower}",
        "prompt tokens",
        "output tokens",
        "hit max_tokens",
        "stopped at JSON",
        "loops",
        "closed",
        "tokens after answer",
        f"decode × none {facts.BETTER_MARKS[True]}",
        f"compile p50 (ms) {lower}",
        f"wall (s) {lower}",
    ]
    return f"{speed}\n\n{md.table(headers, totals)}\n\n{md.text(facts.DIRECTION_LEGEND)}"


def _energy_section(model_arms: list[ArmView]) -> list[str]:
    """Joules per token and per answer, and throttling: a table when measured, else the
    one line saying why."""
    results = [arm.result for arm in model_arms]
    lines = ["## Energy and heat"]
    why = energy.not_measured(results)
    if why is not None:
        lines.append(md.text(public_text(why)))
    if energy.measured(results) or energy.throttle_known(results):
        columns = [*(energy.ENERGY_COLUMNS if energy.measured(results) else ()), energy.THROTTLED]
        headers = ["constraint", *(label for label, _, _, _ in columns)]
        rows = [
            [
                arm.constraint,
                *(facts.fmt(read(arm.result), digits) for _, _, read, digits in columns),
            ]
            for arm in model_arms
        ]
        lines.append(md.table(headers, rows))
        notes = [energy.source_line(results), energy.CAPTION if energy.measured(results) else None]
        lines += [md.text(public_text(note)) for note in notes if note is not None]
    return lines if len(lines) > 1 else []


def _prompt_section(run: LoadedRun, label: str) -> str:
    prompt_format = run.manifest.model(label).prompt_format
    parts = [f"Prompt style: {md.text(prompt_format.style)}."]
    for key, text in facts.prompt_templates(run, label):
        parts.append(
            f"<details><summary>{md.text(key)} (from the model file)</summary>\n\n"
            f"{md.code_block(text, 'jinja')}\n\n</details>"
        )
    template = md.code_block(run.manifest.task.prompt_template)
    parts.append(f"{md.text(facts.task_prompt_title(run))}:\n\n{template}")
    return "\n\n".join(parts)


def _details(summary: str, body: str) -> str:
    """A collapsed block: a blank line on each side so its Markdown renders."""
    return f"<details><summary>{md.text(summary)}</summary>\n\n{body}\n\n</details>"


def _device_section(run: LoadedRun) -> list[str]:
    """The device in one line; the machine's detail (cores, OS, SIMD, ids) collapsed."""
    device = run.manifest.device
    line = f"{md.text(device_tag(device))}: {md.text(facts.device_label(device))}."
    return [
        "## Device",
        line,
        _details("Machine: CPU, cores, RAM, OS, SIMD, ids", _kv_table(device_summary(run))),
    ]


def device_summary(run: LoadedRun) -> list[tuple[str, Any]]:
    """The device facts a reader compares cards by; the rest is collapsed."""
    device = run.manifest.device
    cores = [
        f"{device.physical_cores} physical" if device.physical_cores else None,
        f"{device.logical_cores} logical" if device.logical_cores else None,
    ]
    os_name = " · ".join(str(v) for v in (device.os, device.kernel) if v) or None
    rows: list[tuple[str, Any]] = [
        ("device", device_tag(device)),  # its name and short fingerprint
        # recorded since format 2.8; an older run's derived identity is not shown as fact
        ("model of device", device.identity.model_label if device.identity else None),
        ("fingerprint", device.identity.fingerprint if device.identity else None),
        ("CPU", facts.cpu_label(device)),
        ("cores", ", ".join(c for c in cores if c) or None),
        ("RAM", facts.ram_label(device.ram_total_mb)),
        ("OS", os_name),
        ("virtual machine", device.hypervisor),
        ("SIMD", device.cpu_simd),
    ]
    return [(k, v) for k, v in rows if v is not None]


def run_summary(run: LoadedRun, label: str, model_arms: list[ArmView]) -> list[tuple[str, Any]]:
    """How the numbers were made, in the rows a reader checks first; no local paths."""
    record = run.manifest.model(label)
    runtime = facts.runtime_of(run, label)
    dataset = run.manifest.dataset
    started = run.manifest.started_at
    rows: list[tuple[str, Any]] = [
        ("backend", facts.runtime_label(runtime) or record.backend),
        ("threads", run.manifest.device.threads_used or runtime.get("n_threads")),
        ("model file", f"{Path(record.path).name} ({record.quantization or record.format})"),
        ("model sha256", record.sha256),
        ("model size (MB)", round(record.size_bytes / 1e6, 1)),
        ("constraint modes", ", ".join(arm.constraint for arm in model_arms)),
        ("examples scored per mode", count_range([a.result.n_scored for a in model_arms])),
        ("dataset", facts.dataset_label(run)),
        ("dataset sha256", dataset.sha256),
        ("date (UTC)", started[:10] if started else None),
        # a hand-edited NaN or Infinity is shown as it is, not rounded (a ValueError)
        ("whole run (s)", _rounded(run.manifest.wall_s)),
    ]
    return [(k, v) for k, v in rows if v is not None]


def _rounded(value: float | None) -> float | int | None:
    return round(value) if value is not None and math.isfinite(value) else value


def _full_record(run: LoadedRun, label: str) -> str:
    """Every fact the manifest holds, collapsed: CPU flags and all; a local path as its
    last part only (`public_text`). The model's own runtime and engines come first: in a
    run of several runtimes the device block's build may be another runtime's."""
    parts = [
        "#### Runtime",
        _kv_table(facts.runtime_rows(run, label) + facts.engine_rows(run, label)),
        "#### Device",
        _kv_table(facts.machine_rows(run, label)),
        "#### Run",
        _kv_table(facts.run_rows(run)),
        "#### Model",
        _kv_table(facts.model_rows(run, label)),
        "#### Dataset",
        _kv_table(facts.dataset_rows(run)),
        "#### Decoding and constraint",
        _kv_table(facts.decoding_rows(run, label)),
    ]
    return _details(
        "Full record: runtime, device, run, model, dataset, decoding", "\n\n".join(parts)
    )


def _figure(plot: Plot, name: str) -> str:
    """An image with its caption, which says how to read it (the title is in the image)."""
    return f"![{md.text(plot.title)}]({md.link_target(name)})\n\n*{md.text(plot.caption)}*"


def _pretty(value: Any) -> str:
    return value if isinstance(value, str) else json_line(value, indent=2)


def _sample_outputs(model_arms: list[ArmView], count: int) -> list[str]:
    """The first `count` examples: what was expected and what each mode wrote, verbatim
    in code blocks (raw model text is never Markdown here)."""
    ids = list(dict.fromkeys(s.id for arm in model_arms for s in arm.samples))
    parts = []
    for example_id in ids[:count]:
        by_mode = [
            (arm, next(s for s in arm.samples if s.id == example_id))
            for arm in model_arms
            if any(s.id == example_id for s in arm.samples)
        ]
        first = by_mode[0][1]
        labels = ", ".join(f"{k}: {v}" for k, v in first.groups.items())
        parts.append(f"### {md.text(example_id)}" + (f" ({md.text(labels)})" if labels else ""))
        parts.append(f"Expected:\n\n{md.code_block(_pretty(first.expected), 'json')}")
        for arm, sample in by_mode:
            scores = sample_scores(sample, arm.run.manifest.task_family)
            shown = ", ".join(f"{metric_label(k)} {v:.2f}" for k, v in scores.items())
            parts.append(
                f"{md.text(arm.constraint)} · finish {md.text(sample.finish_reason)}"
                f" · {md.text(shown or 'no scores')}:\n\n"
                f"{md.code_block(sample.raw_output)}"
            )
    return parts


def _source_note(record: ModelRecord) -> list[str]:
    """A requantized variant says so first: its quality has the source's ceiling."""
    source = record.quantized_from
    if source is None or not source.requantized or not source.note:
        return []
    return [f"> **Note**: {md.text(public_text(source.note))}."]


def _sweep_section(run: LoadedRun, swept: list[tuple[Plot, str]]) -> list[str]:
    """Every variant of the run side by side, the front marked, when it has several."""
    if not is_sweep(run):
        return []
    sweep = build_sweep(run)
    return [
        "## Sweep: every variant of this run",
        f"Front drawn on {md.text(metric_label(sweep.metric))}; "
        f"{md.inline_code('edgebench recommend RUN_DIR --max-memory 4GB')} picks under a budget.",
        sweep_markdown(sweep),
        *(_figure(plot, name) for plot, name in swept),
        f"### {md.text(DEVICES_TITLE)}",
        md.table(DEVICE_HEADERS, device_rows(recommend(run)), align_right_from=1),
        md.text(device_note()),
    ]


def card_body(
    run: LoadedRun,
    label: str,
    model_arms: list[ArmView],
    plot_files: list[tuple[Plot, str]],
    examples: int = 2,
    allow_contended: bool = False,
) -> str:
    record = run.manifest.model(label)
    device = run.manifest.device
    cpu = device.cpu_model or device.machine or "this device"
    modes = ", ".join(arm.constraint for arm in model_arms)
    intro = (
        f"{md.text(label)} ({md.text(record.quantization or record.backend)})"
        f" measured with edgebench on {md.text(cpu)}, "
        f"{md.text(device.threads_used or '?')} threads: "
        f"{md.text(facts.dataset_label(run))}, constraint modes {md.text(modes)}, "
        f"JSON extraction {md.text(facts.parse_label(run))}. "
        "Accuracy, speed and memory come from the same run; p50/p95 are over examples."
    )
    command = facts.command_line(run.manifest, local_paths=False)
    swept = [(plot, name) for plot, name in plot_files if plot.name == SWEEP_PLOT]
    plot_files = [(plot, name) for plot, name in plot_files if plot.name != SWEEP_PLOT]
    first, rest = plot_files[:1], plot_files[1:]
    sections = [
        f"# {md.text(label)} · structured JSON extraction on {md.text(cpu)}",
        intro,
        *_source_note(record),
        *_warning(model_arms),
        *_contention(model_arms, allow_contended),
        _headline_table(model_arms),
        *_skipped(model_arms),
        md.text(f"{facts.DIRECTION_LEGEND} Every figure: Accuracy and Performance below."),
        *(_figure(plot, name) for plot, name in first),
        *_sweep_section(run, swept),
        *_device_section(run),
        "## How it was run",
        f"Command:\n\n{md.code_block(command, 'bash')}",
        _kv_table(run_summary(run, label, model_arms)),
        _full_record(run, label),
        "### Prompt",
        _prompt_section(run, label),
        "## Accuracy",
        _accuracy_table(model_arms),
        md.text(facts.INTERVAL_NOTE),
        *_differences(run, label),
        *_group_tables(model_arms),
        *_coverage_table(model_arms),
        "## Performance",
        _perf_tables(model_arms),
        *_energy_section(model_arms),
    ]
    if rest:
        sections.append("## Plots")
        sections += [_figure(plot, name) for plot, name in rest]
    if examples > 0:
        sections.append("## Sample outputs")
        sections += _sample_outputs(model_arms, examples)
    sections.append(
        f"---\n\nGenerated by edgebench {md.text(__version__)} from run folder "
        f"{md.inline_code(run.run_id)}; re-render with {md.inline_code('edgebench card RUN_DIR')}."
    )
    return "\n\n".join(sections) + "\n"


def render_card(
    run: LoadedRun,
    model: str | None,
    plot_files: list[tuple[Plot, str]],
    examples: int = 2,
    allow_contended: bool = False,
) -> str:
    """The card's full text (YAML metadata and Markdown), checked by parsing it back."""
    hub = _hub()
    label = pick_model(run, model)
    model_arms = [arm for arm in arms(run) if arm.model == label]
    data = card_data(run, label, model_arms, allow_contended)
    body = card_body(run, label, model_arms, plot_files, examples, allow_contended)
    content = without_home(f"---\n{data.to_yaml()}\n---\n\n{body}")
    hub.ModelCard(content, ignore_metadata_errors=False)
    return content


def without_home(text: str) -> str:
    """The user's home folder as `~` wherever a run's text still names it (an error
    message, a note): a published card never says whose machine it was."""
    home = str(Path.home()).rstrip("/")
    if not home:
        return text
    return re.sub(re.escape(home) + r"(?=/|\b|$)", "~", text)


def write_card(
    run: LoadedRun,
    out: Path,
    model: str | None = None,
    examples: int = 2,
    allow_contended: bool = False,
) -> CardFiles:
    """The card at `out` and its plots next to it (`<stem>-<plot>.png`), each written
    atomically."""
    label = pick_model(run, model)
    plots = all_plots([arm for arm in arms(run) if arm.model == label])
    if is_sweep(run):
        plots += sweep_plots(build_sweep(run))
    plot_files = [(plot, f"{out.stem}-{plot.name}.png") for plot in plots]
    content = render_card(run, label, plot_files, examples, allow_contended)
    written = []
    for plot, name in plot_files:
        write_bytes_atomic(out.parent / name, plot.png)
        written.append(out.parent / name)
    write_text_atomic(out, content)
    return CardFiles(out, written)
