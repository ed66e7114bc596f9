"""`edgebench report --html`: one self-contained static page for one or more run folders.

A sortable leaderboard (one row per model and constraint mode), the plots as inline PNG
data, every breakdown, and each example with its prompt, raw output, parsed output and
scores. Inline CSS and one small inline script, both allowed by hash in a
Content-Security-Policy that allows nothing else: no network, no other script, no
plugin, no form. Jinja2 escapes every value (autoescape on for every template, whatever
its name); only the page's own CSS and script are marked safe, never text from a run.
"""

from __future__ import annotations

import base64
import hashlib
import struct
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from edgebench import __version__
from edgebench.analysis.devices import labels_by_arm
from edgebench.analysis.figures import PREFERRED_METRICS, headline_scores, metric_label
from edgebench.analysis.recommend import recommend
from edgebench.analysis.rundata import (
    ArmView,
    LoadedRun,
    arms,
    flatten,
    labels_by_run,
    numeric,
    run_labels,
    sample_scores,
)
from edgebench.analysis.sweep import Sweep, SweepRow, build_sweep, is_sweep
from edgebench.errors import UserError
from edgebench.io import json_line, write_text_atomic
from edgebench.report import coverage, energy, facts
from edgebench.report.cells import Column, TableCell
from edgebench.report.cells import num_cell as _num
from edgebench.report.cells import perf_cell as _perf_cell
from edgebench.report.cells import rate_cell as _rate
from edgebench.report.cells import table_data as _table
from edgebench.report.cells import text_cell as _text
from edgebench.report.device_view import devices_section
from edgebench.report.plots import Plot, all_plots, arm_labels
from edgebench.report.recommend_view import DEVICE_HEADERS, DEVICES_TITLE, device_note, device_rows
from edgebench.report.sweep_plot import sweep_plots
from edgebench.report.sweep_view import (
    COST_COLUMNS,
    LABELS,
    SWEEP_NOTE,
    cells,
    footnotes,
    headers,
)
from edgebench.runfolder.records import SampleRecord

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> Environment:
    """Autoescape is on for every template, not chosen by file name."""
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )


def _asset(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(css: str, js: str) -> str:
    """Nothing loads from anywhere: images only as data: URIs, the one style sheet and
    the one script only by their hashes (an injected tag or handler would not run)."""
    return "; ".join(
        (
            "default-src 'none'",
            "img-src data:",
            f"style-src {_sha256_source(css)}",
            f"script-src {_sha256_source(js)}",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )


def leaderboard(all_arms: list[ArmView]) -> dict[str, Any]:
    """One row per (run, model, mode). The first screen holds what a reader compares:
    the row (run, device, model, quantization, mode, n), the task's headline scores with
    their intervals, and the cost (TTFT, decode tok/s, latency, peak RSS); every other
    column follows, hidden until the column chooser shows it. Extra metric families
    have tables of their own (`family_tables`)."""
    task_names = list(dict.fromkeys(k for arm in all_arms for k in numeric(arm.result.metrics)))
    headline = headline_scores(task_names)
    perf = {key: (label, read, digits) for label, key, read, digits in facts.PERF_COLUMNS}
    first_perf = [key for key in facts.FIRST_SCREEN_PERF if key in perf]
    columns = [
        Column("run", "run", wrap="anywhere"),
        Column("device", "device", wrap="anywhere"),
        Column("model", "model", wrap="anywhere"),
        Column("quant", "quant"),
        Column("runtime", "runtime", wrap="words"),
        Column("constraint", "mode"),
        Column("engine", "engine", wrap="words"),
        Column("n", "n"),
        *(Column(f"metric:{m}", metric_label(m)) for m in headline),
        *(Column(key, perf[key][0]) for key in first_perf),
        Column("n_skipped", facts.SKIPPED_LABEL, first=False),
        Column("n_invalid_data", facts.INVALID_DATA_LABEL, first=False),
        *(
            Column(f"metric:{m}", metric_label(m), first=False)
            for m in task_names
            if m not in headline
        ),
        *(Column(key, perf[key][0], first=False) for key in perf if key not in first_perf),
    ]
    results = [arm.result for arm in all_arms]
    power = list(energy.ENERGY_COLUMNS) if energy.measured(results) else []
    if energy.throttle_known(results):
        power.append(energy.THROTTLED)
    columns += [Column(key, label, first=False) for label, key, _, _ in power]
    labels = labels_by_run(all_arms)
    named = labels_by_arm(all_arms)  # runs of several devices: the device's name first
    rows = []
    for arm in all_arms:
        values, intervals = arm.metrics, arm.intervals
        device = facts.device_summary(arm.run.manifest.device)
        cells = {
            "run": _text(labels[id(arm.run)]),
            "device": _text(f"{named[id(arm)]} · {device}" if id(arm) in named else device),
            "model": _text(arm.model),
            "quant": _text(arm.run.manifest.model(arm.model).quantization),
            "runtime": _versioned(facts.runtime_cell(arm.result), arm.result.runtime_version),
            "constraint": _text(arm.constraint),
            "engine": _versioned(facts.engine_cell(arm.result), arm.result.engine_version),
            "n": _num(arm.result.n_scored, 0),
            "n_skipped": _num(arm.result.n_skipped, 0),
            "n_invalid_data": _num(arm.run.summary.n_invalid_data, 0),
        }
        cells |= {f"metric:{m}": _rate(values.get(m), intervals.get(m)) for m in task_names}
        cells |= {
            key: _perf_cell(arm, key, read(arm.result), digits)
            for key, (_, read, digits) in perf.items()
        }
        for _, key, read, digits in power:
            value = read(arm.result)
            cells[key] = _text(value) if isinstance(value, bool) else _num(value, digits)
        rows.append([cells[column.key] for column in columns])
    small = any(facts.indicative(arm.result.n_scored) for arm in all_arms)
    return _table(
        columns,
        rows,
        skipped=[
            f"skipped: {arm.model} · {arm.constraint}: {arm.result.skip_reason}"
            for arm in all_arms
            if arm.result.skip_reason
        ],
        warning=facts.INDICATIVE if small else None,
        note=facts.INTERVAL_NOTE,
        energy=[
            line
            for line in (
                energy.source_line(results),
                energy.CAPTION if energy.measured(results) else None,
                energy.not_measured(results),
            )
            if line is not None
        ],
    )


def _versioned(name: str, version: str | None) -> TableCell:
    """A runtime's or an engine's name, its version under it where the run recorded it."""
    return replace(_text(name), note=version or "")


def family_tables(all_arms: list[ArmView]) -> list[dict[str, Any]]:
    """Each extra metric family (`--metrics`) in a table of its own: its figures with
    their intervals, one row per (run, model, mode)."""
    names = dict.fromkeys(
        name
        for arm in all_arms
        for name, family in arm.result.families.items()
        if family.role == "extra"
    )
    labels = labels_by_run(all_arms)
    tables = []
    for name in names:
        present = [arm for arm in all_arms if name in arm.result.families]
        figures = list(
            dict.fromkeys(k for arm in present for k in numeric(arm.result.families[name].overall))
        )
        columns = [Column("run", "run"), Column("model", "model"), Column("constraint", "mode")]
        columns += [Column("n", "n")]
        columns += [Column(f"metric:{f}", metric_label(f)) for f in figures]
        rows = []
        for arm in present:
            family = arm.result.families[name]
            rows.append(
                [_text(labels[id(arm.run)]), _text(arm.model), _text(arm.constraint)]
                + [_num(family.overall.get("n"), 0)]
                + [_rate(family.overall.get(f), family.ci95.get(f)) for f in figures]
            )
        tables.append(_table(columns, rows, name=name))
    return tables


def group_tables(all_arms: list[ArmView]) -> list[dict[str, Any]]:
    names: dict[str, None] = {}
    for arm in all_arms:
        names.update(dict.fromkeys(arm.groups))
    metrics = facts.metric_names(all_arms)
    labels = arm_labels(all_arms)
    tables = []
    for name in names:
        columns = [("value", name), ("arm", "model · constraint"), ("n", "n")]
        columns.append(("n_skipped", facts.SKIPPED_LABEL))
        columns += [(f"metric:{m}", metric_label(m)) for m in metrics]
        rows = []
        for label, arm in zip(labels, all_arms, strict=True):
            for value, scores in arm.groups.get(name, {}).items():
                flat = numeric(scores)
                rows.append(
                    [_text(value), _text(label), _num(scores.get("n"), 0)]
                    + [_num(scores.get("n_skipped", 0), 0)]
                    + [_num(flat.get(m), 3) for m in metrics]
                )
        rows.sort(key=lambda r: str(r[0].value))
        tables.append(
            {
                "name": name,
                "columns": [{"key": k, "label": label} for k, label in columns],
                "rows": rows,
            }
        )
    return tables


def coverage_tables(all_arms: list[ArmView]) -> list[dict[str, Any]]:
    """Schema-engine coverage per (arm, subset), as one more group table (none when no
    arm has a schema engine)."""
    labels = arm_labels(all_arms)
    rows = [
        [_text(row["group"]), _text(label)]
        + [_num(row[key], digits) for _, key, digits in coverage.COLUMNS]
        for label, arm in zip(labels, all_arms, strict=True)
        for row in coverage.arm_coverage_rows(arm.run.run_id, arm.result)
    ]
    if not rows:
        return []
    columns = [("value", "group"), ("arm", "model · constraint")]
    columns += [(f"coverage:{key}", header) for header, key, _ in coverage.COLUMNS]
    return [
        {
            "name": "group · schema engine coverage",
            "columns": [{"key": k, "label": label} for k, label in columns],
            "rows": rows,
        }
    ]


def _sweep_row(sweep: Sweep, row: SweepRow) -> list[TableCell]:
    """A sweep row as cells: labels as text, scores with their interval, figures sortable
    by their number (the same columns as `headers`)."""
    texts = cells(sweep, row, intervals=False)
    return [
        *(_text(text) for text in texts[: len(LABELS)]),
        _num(row.arm.result.n_scored, 0),
        *(_rate(row.arm.metrics.get(m), row.arm.intervals.get(m)) for m in sweep.scores),
        *(_num(read(row), digits) for _, read, digits in COST_COLUMNS),
        _text(texts[-1]),
    ]


def sweep_sections(runs: list[LoadedRun]) -> list[dict[str, Any]]:
    """Each run of several variants: its sweep table (front marked) and plot."""
    sections = []
    for run, label in zip(runs, run_labels([r.path for r in runs]), strict=True):
        if not is_sweep(run):
            continue
        sweep = build_sweep(run)
        columns = [Column(f"sweep:{i}", h) for i, h in enumerate(headers(sweep))]
        rows = [_sweep_row(sweep, row) for row in sweep.rows]
        table = _table(columns, rows, notes=[*footnotes(sweep), SWEEP_NOTE])
        fit_columns = [Column(f"fit:{i}", h) for i, h in enumerate(DEVICE_HEADERS)]
        rec = recommend(run)
        fit_rows = [
            [_text(key), _num(c.need_mb, 0), *map(_text, verdicts)]
            for c, (key, _, *verdicts) in zip(rec.candidates, device_rows(rec), strict=True)
        ]
        sections.append(
            {
                "run": label,
                "metric": metric_label(sweep.metric),
                "table": table,
                "plots": plot_entries(sweep_plots(sweep)),
                "devices": _table(
                    fit_columns, fit_rows, title=DEVICES_TITLE, notes=[device_note()]
                ),
            }
        )
    return sections


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG header, so the page reserves the space."""
    return struct.unpack(">II", png[16:24])


def plot_entries(plots: list[Plot]) -> list[dict[str, Any]]:
    entries = []
    for plot in plots:
        width, height = _png_size(plot.png)
        uri = "data:image/png;base64," + base64.b64encode(plot.png).decode("ascii")
        entries.append(
            {
                "title": plot.title,
                "caption": plot.caption,
                "data_uri": uri,
                "width": width,
                "height": height,
            }
        )
    return entries


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json_line(value, indent=2)


def _headline(flat: dict[str, float]) -> tuple[str, bool | None]:
    name = next((m for m in PREFERRED_METRICS if m in flat), next(iter(flat), None))
    if name is None:
        return "no scores", None
    passed = flat.get("schema_compliance", flat.get(name))
    return f"{metric_label(name)} {flat[name]:.2f}", bool(passed and passed >= 1)


# Sample fields the drill-down shows elsewhere (or that name the example, shown above it).
_SHOWN_APART = ("prompt", "raw_output", "parsed", "expected", "groups", "id", "index", "schema_id")


def _sample_facts(sample: SampleRecord) -> list[tuple[str, str]]:
    """Everything else a sample records, scores first, whatever fields a run has
    (timings, parse path, guard counts, errors ...); lists joined, nested as `a.b`."""
    record = sample.to_json()
    scores = {f"scores.{k}": v for k, v in flatten(sample.scores or {}).items()}
    rest = {
        k: v
        for k, v in flatten(record).items()
        if not k.startswith("scores.") and k.split(".", 1)[0] not in _SHOWN_APART
    }
    rows = []
    for key, value in {**scores, **rest}.items():
        if value is None or value == []:
            continue
        shown = "; ".join(map(str, value)) if isinstance(value, list) else facts.fmt(value)
        rows.append((key, shown))
    return rows


def example_views(run_arms: list[ArmView]) -> list[dict[str, Any]]:
    """Each example once (by id, in run order) with every arm's answer to it."""
    labels = arm_labels(run_arms)
    examples: dict[str, dict[str, Any]] = {}
    for label, arm in zip(labels, run_arms, strict=True):
        for sample in arm.samples:
            example = examples.setdefault(
                sample.id,
                {
                    "id": sample.id,
                    "groups": list(sample.groups.items()),
                    "prompt": sample.prompt,
                    "expected": _pretty(sample.expected),
                    "arms": [],
                },
            )
            headline, passed = _headline(sample_scores(sample, arm.run.manifest.task_family))
            example["arms"].append(
                {
                    "label": label,
                    "headline": headline,
                    "passed": passed,
                    "facts": _sample_facts(sample),
                    "raw_output": sample.raw_output,
                    "parsed": _pretty(sample.parsed),
                }
            )
    return list(examples.values())


def run_view(run: LoadedRun, run_label: str, run_arms: list[ArmView]) -> dict[str, Any]:
    models = dict.fromkeys(arm.model for arm in run_arms)
    # The first model's runtime with the device; in a run of several runtimes, each other
    # model's own runtime with its model.
    blocks = [{"title": "Runtime and device", "rows": facts.device_rows(run), "code": None}]
    for label in models:
        blocks.append(
            {"title": f"Model {label}", "rows": facts.model_rows(run, label), "code": None}
        )
        if not facts.builds_on_device(run, label):
            rows = facts.runtime_rows(run, label)
            blocks.append({"title": f"Runtime · {label}", "rows": rows, "code": None})
        for key, text in facts.prompt_templates(run, label):
            blocks.append({"title": f"{label}: {key}", "rows": [], "code": text})
    blocks += [
        {"title": "Run", "rows": facts.run_rows(run), "code": None},
        {"title": "Dataset", "rows": facts.dataset_rows(run), "code": None},
    ]
    for label in models:
        rows = facts.decoding_rows(run, label)
        blocks.append({"title": f"Decoding and constraint · {label}", "rows": rows, "code": None})
    blocks.append(
        {
            "title": facts.task_prompt_title(run),
            "rows": [],
            "code": run.manifest.task.prompt_template,
        }
    )
    differences = [
        (f"{row[0]} · {row[1]} · {row[2]} (n {row[3]})", f"{row[4]} {row[5]}")
        for row in facts.difference_rows(run.summary)
    ]
    if differences:  # arm minus arm on the same examples, paired intervals
        title = "Differences on the same examples (paired 95% intervals; n*: n < 50)"
        blocks.append({"title": title, "rows": differences, "code": None})
    for block in blocks:
        block["rows"] = [(k, facts.fmt(v)) for k, v in block["rows"]]
    return {
        "id": run_label,
        "command": facts.command_line(run.manifest),
        "blocks": blocks,
        "examples": example_views(run_arms),
    }


def render_report(runs: list[LoadedRun], title: str | None = None) -> str:
    if not runs:
        raise UserError("give at least one run folder")
    all_arms = [arm for run in runs for arm in arms(run)]
    css, js = _asset("report.css"), _asset("report.js")
    template = environment().get_template("report.html.j2")
    models = ", ".join(dict.fromkeys(arm.model for arm in all_arms))
    return template.render(
        title=title or f"edgebench report · {models}",
        version=__version__,
        generated_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        csp=content_security_policy(css, js),
        css=Markup(css),  # the page's own style sheet, allowed by hash in the CSP
        js=Markup(js),  # the page's own sorting script, allowed by hash in the CSP
        leaderboard=leaderboard(all_arms),
        devices=devices_section(all_arms),
        sweeps=sweep_sections(runs),
        families=family_tables(all_arms),
        plots=plot_entries(all_plots(all_arms)),
        groups=group_tables(all_arms) + coverage_tables(all_arms),
        runs=[
            run_view(run, label, [a for a in all_arms if a.run is run])
            for run, label in zip(runs, run_labels([r.path for r in runs]), strict=True)
        ],
    )


def write_report(runs: list[LoadedRun], out: Path, title: str | None = None) -> Path:
    write_text_atomic(out, render_report(runs, title))
    return out
