"""`edgebench compare`: models, runtimes and constraint modes side by side, from run
folders: one row per (run, model, constraint mode)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich import box
from rich.markup import escape
from rich.table import Table

from edgebench.analysis.figures import METRIC_LABELS
from edgebench.metrics import FAMILIES
from edgebench.report import energy
from edgebench.report.facts import (
    DIFFERENCE_HEADERS,
    INDICATIVE,
    INTERVAL_NOTE,
    NO_VALUE,
    arm_runtime,
    difference_rows,
    indicative,
)
from edgebench.report.fit import Trimmed
from edgebench.runfolder.identity import identity_of, name_tag
from edgebench.runfolder.records import (
    ArmSummary,
    CompileSummary,
    Distribution,
    FidelityRecord,
    Manifest,
    Summary,
)
from edgebench.scoring.extract import describe_parse
from edgebench.summary import result_arms
from edgebench.summary.consistency import FAMILY as CONSISTENCY
from edgebench.system.records import Device
from edgebench.tasks import reference_of

Read = Callable[[ArmSummary], Any]


def _metric(name: str) -> Read:
    return lambda arm: arm.metrics.get(name)


def _ms(seconds: float | None) -> float | None:
    return seconds * 1000 if seconds is not None else None


def _cached(compiled: CompileSummary) -> Distribution:
    """What compiling a schema again costs: each answer's own compile where the engine
    compiles the grammar again inside every answer (OpenVINO GenAI's XGrammar, whose
    cache hit, a few µs, is not what an answer pays), else the cache hit."""
    return compiled.per_answer_s or compiled.cached_s


def _coverage(count: str) -> Read:
    return lambda arm: getattr(arm.coverage.overall, count) if arm.coverage else None


def _headline(family: str) -> tuple[tuple[str, str, Read, int], ...]:
    """(header, JSON key, how to read it from one arm's summary, digits) of the accuracy
    columns the family declares: a figure of its own, or a coverage count."""
    return tuple(
        (header, key.removeprefix("coverage."), _coverage(key[9:]), 0)
        if key.startswith("coverage.")
        else (header, key, _metric(key), 3)
        for header, key in FAMILIES[family].headline
    )


# The columns by the task's family: EdgeJSON's (the default task's) when runs mix
# families; DeepJSONEval runs show their own scores in their place.
_KNOWN = {name: _headline(name) for name, info in FAMILIES.items() if info.headline}
ACCURACY = _KNOWN["edgejson"]
DEEPJSON_ACCURACY = _KNOWN["deepjson"]
COST: tuple[tuple[str, str, Read, int], ...] = (
    ("TTFT s", "ttft_s_p50", lambda a: a.perf.ttft_s.p50, 2),
    ("tok/s", "decode_tok_s_p50", lambda a: a.perf.decode_tok_s.p50, 1),
    ("×none", "decode_ratio_to_none", lambda a: a.decode_ratio_to_none, 2),
    ("lat s", "latency_s_p50", lambda a: a.perf.latency_s.p50, 2),
    ("compile ms", "compile_ms_p50", lambda a: _ms(a.compile.first_s.p50), 2),
    ("cached ms", "cached_compile_ms_p50", lambda a: _ms(_cached(a.compile).p50), 3),
    ("limit", "hit_token_limit", lambda a: a.perf.hit_token_limit, 0),
    ("loop", "loops", lambda a: a.perf.loops, 0),
    ("closed", "closed", lambda a: a.perf.closed, 0),
    ("unsup", "n_unsupported", lambda a: a.n_unsupported, 0),
    ("RSS MiB", "peak_rss_mib", lambda a: a.perf.peak_rss_mb, 0),
    ("load s", "load_s", lambda a: a.perf.load_s, 2),
    ("size MB", "model_size_mb", lambda a: a.model_size_mb, 1),
    ("wall s", "wall_s", lambda a: a.perf.wall_s, 0),
)
# Shown when a table has several models: decode tok/s over the first model's, same mode.
MODEL_RATIO = ("×1st", "decode_ratio_to_first_model", lambda a: a.decode_ratio_to_first_model, 2)


def _consistency(figure: str) -> Read:
    def read(arm: ArmSummary) -> Any:
        family = arm.families.get(CONSISTENCY)
        return family.overall.get(figure) if family is not None else None

    return read


# A consistency run's arms (one per temperature): how much the N answers to a prompt
# agree, mean over prompts (summary/consistency.py).
CONSISTENCY_COLUMNS: tuple[tuple[str, str, Read, int], ...] = (
    ("cons", "consistency", _consistency("score"), 3),
    ("STED", "sted_mean", _consistency("sted_mean"), 3),
)
# Their intervals: the consistency family's figure of each column.
_CONSISTENCY_FIGURES = {"consistency": "score", "sted_mean": "sted_mean"}


def _task_columns(summaries: list[Summary]) -> tuple[tuple[str, str, Read, int], ...]:
    """The task's headline scores: the known tasks' columns; for another family shared
    by every run (roundtrip: CSA, NTED), its own figures, valid JSON first."""
    families = {s.task_family for s in summaries}
    if len(families) != 1:
        return ACCURACY
    (family,) = families
    if family in _KNOWN:
        return _KNOWN[family]
    figures = dict.fromkeys(
        k for s in summaries for a in s.arms for k in a.metrics if k not in ("n", "n_skipped")
    )
    ordered = sorted(figures, key=lambda k: k != "valid_json")
    return tuple(
        ("valid" if k == "valid_json" else METRIC_LABELS.get(k, k), k, _metric(k), 3)
        for k in ordered
    )


def task_columns(summaries: list[Summary]) -> tuple[tuple[str, str, Read, int], ...]:
    """The task's headline scores, as `compare` heads them (`run`'s screen shows them)."""
    return _task_columns(summaries)


def columns_for(summaries: list[Summary]) -> tuple[tuple[str, str, Read, int], ...]:
    """The table's columns: the task's scores (DeepJSONEval's when every run has them),
    a consistency run's consistency figures, then what they cost."""
    columns = _task_columns(summaries)
    if any(s.consistency is not None for s in summaries):
        columns += CONSISTENCY_COLUMNS
    arms = [a for s in summaries for a in s.arms]
    if energy.measured(arms):
        columns += energy.ENERGY_COLUMNS
    if energy.throttle_known(arms):
        columns += (energy.THROTTLED,)
    return columns + COST


def parse_label(summary: Summary) -> str:
    """How the run took the JSON from its answers (`--parse`)."""
    return describe_parse(summary.parse, summary.task, reference_of(summary.task))


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, bool):
        return energy.throttle_text(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


# The speed columns with an interval: column key -> Perf.p50_ci95's figure.
_SPEED_FIGURES = {
    "ttft_s_p50": "ttft_s",
    "decode_tok_s_p50": "decode_tok_s",
    "latency_s_p50": "latency_s",
}


def _intervals(arm: ArmSummary) -> dict[str, list[float] | None]:
    """The 95% intervals by column key: the task's figures, a consistency arm's own, the
    speed p50s and the paired decode ratio to `none`."""
    task = arm.task
    result = dict(task.ci95) if task is not None else {}
    result.update({k: arm.perf.p50_ci95.get(f) for k, f in _SPEED_FIGURES.items()})
    result["decode_ratio_to_none"] = arm.perf.decode_ratio_to_none_ci95
    consistency = arm.families.get(CONSISTENCY)
    if consistency is not None:
        result.update({k: consistency.ci95.get(f) for k, f in _CONSISTENCY_FIGURES.items()})
    return result


def _differences(summary: Summary, arm: ArmSummary) -> list[dict[str, Any]]:
    """The arm's figures minus another arm's on the same examples (it is the `other`)."""
    return [
        {
            "vs": d.label,
            "metric": d.metric,
            "n": d.n,
            "difference": d.difference,
            "ci95": d.ci95,
        }
        for d in summary.differences
        if (d.other_model, d.other_constraint) == (arm.model, arm.constraint)
    ]


# Fidelity to the run's highest-precision variant (fidelity.json), beside the task scores.
FIDELITY_COLUMNS = (("KL", "kl_mean", 4), ("top-1", "top1_agreement", 3))


def _fidelity(record: FidelityRecord | None, model: str) -> dict[str, Any]:
    """A model's fidelity figures; `fidelity`: reference, variant or None (not measured)."""
    empty: dict[str, Any] = {"fidelity": None, "kl_mean": None, "top1_agreement": None}
    if record is None:
        return empty
    variant = record.variants.get(model)
    if variant is not None:
        return {
            "fidelity": "variant",
            "kl_mean": variant.kl_mean,
            "top1_agreement": variant.top1_agreement,
        }
    return {**empty, "fidelity": "reference"} if record.is_reference(model) else empty


def _arm_settings(manifest: Manifest | None, model: str) -> dict[str, Any]:
    """What an arm ran with: the model file's quantization (Q4_K_M, int4 ...) and the
    run's thread count; None when not known (no manifest given, or not recorded)."""
    if manifest is None:
        return {"quantization": None, "threads": None}
    record = next((m for m in manifest.models if m.label == model), None)
    return {
        "quantization": record.quantization if record else None,
        "threads": manifest.settings.threads,
    }


def compare_rows(
    summaries: list[Summary],
    fidelity: list[FidelityRecord | None] | None = None,
    devices: list[Device] | None = None,
    manifests: list[Manifest] | None = None,
) -> list[dict[str, Any]]:
    """One row per (run, model, constraint mode), values as numbers (for tables and
    JSON). A skipped mode has its reason under `skipped` and no figures. `ci95`: the
    task's figures' 95% bootstrap intervals, and those of the speed p50s and of
    `decode_ratio_to_none` (paired); `peak_rss_mib`: MiB, `model_size_mb`: MB (10^6);
    `differences`: this arm minus another on the same examples, with paired intervals;
    `indicative`: n < 50; `energy.*` (None with `energy_reason` when unmeasured) and
    `throttled_during_run`; `step_times`: the decode loop's phases (report/steps.py). A
    consistency run has a row per temperature (`temperature`; None for greedy runs): `n` counts its
    generations at that temperature. `kl_mean`, `top1_agreement`: the model's fidelity to
    its reference (`fidelity`: variant or reference) when the run has fidelity.json.
    `cached_compile_ms_p50`: compiling a schema again; where the engine compiles the
    grammar again inside every answer (`compiled_per_answer`), each answer's compile.
    `device`, `device_fingerprint`: each run's device (`devices`, its manifest's), by the
    name and fingerprint of its identity; None when not given. `quantization`, `threads`:
    what the arm ran with (`manifests`: each run's manifest); None when not given.
    `runtime`: what decoded the arm, as people name it (llama.cpp, onnxruntime; a runtime
    this edgebench does not know by its recorded name); `engine`: what enforced the
    constraint mode (llguidance, llama.cpp GBNF; "-" for none; None: skipped, or not
    known), each with its version where the run recorded it (`*_version`)."""
    # every row has the energy figures (None when unmeasured) and the throttling flag
    columns = (*columns_for(summaries), MODEL_RATIO, *energy.ENERGY_COLUMNS, energy.THROTTLED)
    records = fidelity or [None] * len(summaries)
    identities = [identity_of(d) for d in devices] if devices else [None] * len(summaries)
    settings: list[Manifest | None] = list(manifests) if manifests else [None] * len(summaries)
    rows = []
    for summary, record, identity, manifest in zip(
        summaries, records, identities, settings, strict=True
    ):
        for arm in result_arms(summary):
            row: dict[str, Any] = {
                "run": summary.run_id,
                "device": identity.name if identity else None,
                "device_fingerprint": identity.fingerprint if identity else None,
                "model": arm.model,
                "runtime": arm_runtime(arm),
                "runtime_version": arm.runtime_version,
                "constraint": arm.constraint,
                "engine": arm.engine,
                "engine_version": arm.engine_version,
                **_arm_settings(manifest, arm.model),
                "temperature": arm.temperature,
                "parse": parse_label(summary),
                "n": arm.n_scored,  # the examples the rates are over
                "n_skipped": arm.n_skipped,  # not decoded: too long for the context
                "n_invalid_data": summary.n_invalid_data,  # rows left out of the dataset
                "skipped": arm.skip_reason,
            }
            row.update({key: None if arm.skip_reason else read(arm) for _, key, read, _ in columns})
            row.update(_fidelity(record, arm.model))
            row["ttft_warm"] = arm.perf.ttft_warm
            row["compiled_per_answer"] = arm.compile.per_answer_s is not None
            # per decode-loop phase: calls, mean, the median answer's p50 and p99 (µs)
            row["step_times"] = {k: v.to_json() for k, v in arm.perf.step_times.items()}
            row["ci95"] = {} if arm.skip_reason else _intervals(arm)
            row["differences"] = _differences(summary, arm)
            row["indicative"] = indicative(arm.n_scored)
            row["energy_reason"] = arm.energy.reason if arm.energy is not None else None
            rows.append(row)
    return rows


def _device_tag(row: dict[str, Any]) -> str:
    """ "pi5-a · d1a2b3c4": a row's device name and short fingerprint."""
    return name_tag(row["device"], row["device_fingerprint"])


def _ci_digits(key: str, digits: int) -> int:
    """A speed figure's interval as its value is shown; a rate's to 2 digits (.55)."""
    return digits if key in _SPEED_FIGURES or key == "decode_ratio_to_none" else 2


def with_interval(cell: str, interval: list[float] | None, digits: int = 2) -> str:
    """The value over its 95% interval, on two lines to keep the column narrow."""
    if not interval:
        return cell
    lo, hi = (f"{v:.{digits}f}".removeprefix("0") for v in interval)  # .55–1.00: narrow
    return f"{cell}\n{lo}–{hi}"


def compare_table(
    summaries: list[Summary],
    fidelity: list[FidelityRecord | None] | None = None,
    devices: list[Device] | None = None,
    fold_runtime: bool = False,
) -> Table:
    """Values are p50 over examples; the run column appears when more than one run is
    compared, the model column (and ×1st) when a table holds more than one model, KL and
    top-1 after the task's scores when a run measured fidelity. `devices` (each run's):
    named with their short fingerprint in the title when the runs share one, else in a
    device column after the run. The runtime column follows the model, the engine
    column the constraint; with `fold_runtime` (the terminal), a runtime every row
    shares is said once in the title instead."""
    rows = compare_rows(summaries, fidelity, devices)
    runtimes = list(dict.fromkeys(row["runtime"] for row in rows))
    runtime_column = not (fold_runtime and len(runtimes) == 1)
    tags = list(dict.fromkeys(_device_tag(row) for row in rows if row["device"] is not None))
    several_runs = len(summaries) > 1
    several_models = len({row["model"] for row in rows}) > 1
    title = (
        "models and constraint modes side by side"
        if several_models
        else "constraint modes side by side"
    )
    if not several_runs and summaries:
        if not several_models:
            title += f" · {summaries[0].models[0]}"
        title += f" · {summaries[0].run_id}"
    if not runtime_column:  # one runtime for every row: said once
        title += f" · runtime {runtimes[0] or NO_VALUE}"
    parses = list(dict.fromkeys(row["parse"] for row in rows))
    if len(parses) == 1:  # one extraction for every row: said once
        title += f" · parse {parses[0]}"
    if len(tags) == 1:  # one device for every row: said once
        title += f" · on {tags[0]}"
    columns = list(columns_for(summaries))
    fidelity_shown = any(row["fidelity"] for row in rows)
    if fidelity_shown:
        at = len(_task_columns(summaries))
        columns[at:at] = [(h, key, lambda arm: None, d) for h, key, d in FIDELITY_COLUMNS]
    if several_models:
        columns.append(MODEL_RATIO)
    table = Table(title=escape(title), title_justify="left")
    if several_runs:
        table.add_column("run")
    if len(tags) > 1:
        table.add_column("device", no_wrap=True)
    if several_runs or several_models:
        # Model names are what the table is about: never cut them.
        width = max((len(str(row["model"])) for row in rows), default=5)
        table.add_column("model", no_wrap=True, min_width=width)
    if runtime_column:
        table.add_column("runtime", no_wrap=True)
    if len(parses) > 1:
        table.add_column("parse", no_wrap=True)
    table.add_column("constraint", no_wrap=True)
    table.add_column("engine", no_wrap=True)
    sampled = any(row["temperature"] is not None for row in rows)
    if sampled:
        table.add_column("T", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("invalid", justify="right")
    with_ci = {key for row in rows for key, ci in row["ci95"].items() if ci}
    for header, key, _, _ in columns:  # an interval beneath a rate folds, never cut
        table.add_column(header, justify="right", overflow="fold" if key in with_ci else "ellipsis")
    skipped = []
    for row in rows:
        temperature = [_cell(row["temperature"], 2)] if sampled else []
        engine = escape(row["engine"] or NO_VALUE)
        cells = [row["constraint"], engine, *temperature]
        cells.append("skip" if row["skipped"] else str(row["n"]))
        counts = (row["n_skipped"], row["n_invalid_data"])
        cells += [NO_VALUE if row["skipped"] else str(count) for count in counts]
        counted = len(cells)
        cells += [
            with_interval(_cell(row[key], digits), row["ci95"].get(key), _ci_digits(key, digits))
            for _, key, _, digits in columns
        ]
        keys = [key for _, key, _, _ in columns]
        if row["fidelity"] == "reference" and fidelity_shown:
            for _, key, _ in FIDELITY_COLUMNS:
                cells[counted + keys.index(key)] = "ref"
        if row.get("ttft_warm") and "ttft_s_p50" in keys:
            cells[counted + keys.index("ttft_s_p50")] += "w"
        if row.get("compiled_per_answer") and "cached_compile_ms_p50" in keys:
            cells[counted + keys.index("cached_compile_ms_p50")] += "a"
        prefix = [escape(row["run"] or "-")] if several_runs else []
        if len(tags) > 1:
            prefix.append(escape(_device_tag(row)))
        if several_runs or several_models:
            prefix.append(escape(row["model"] or "-"))
        if runtime_column:
            prefix.append(escape(row["runtime"] or NO_VALUE))
        if len(parses) > 1:
            prefix.append(escape(row["parse"]))
        table.add_row(*prefix, *cells)
        if row["skipped"]:
            skipped.append(escape(f"{row['model']} · {row['constraint']}: {row['skipped']}"))
    shown_headers = {str(column.header) for column in table.columns}
    legend = [f"{h}: {text}" for h, text in LEGEND if h in shown_headers]
    if "cached ms" in shown_headers and any(row["compiled_per_answer"] for row in rows):
        legend.append(PER_ANSWER_NOTE)
    legend.append(
        "figures are p50 over the examples; under one: its 95% bootstrap interval lo–hi "
        "(.55 = 0.55; 2,000 resamples, seed 0; ×none's paired)"
    )
    if len(parses) > 1:
        legend.append(
            "parse: the runs took the JSON from their answers differently (--parse): their "
            "accuracy columns are not comparable"
        )
    arms = [a for s in summaries for a in s.arms]
    power = [
        line for line in (energy.source_line(arms), energy.not_measured(arms)) if line is not None
    ]
    if energy.measured(arms):
        legend.append(energy.CAPTION)
    versions = _versions(rows)
    if versions:
        legend.append(f"versions: {versions}")
    warning = [f"⚠ {INDICATIVE}"] if any(row["indicative"] for row in rows) else []
    notes = [*warning, *map(escape, legend), *map(escape, power)]
    # not "skipped: ...": that is the legend line of the `skipped` column, left out with it
    notes += [f"skipped arm: {s}" for s in skipped]
    table.caption = "\n".join(notes)
    return table


def _versions(rows: list[dict[str, Any]]) -> str:
    """ "llama.cpp 0.3.36 · llguidance 1.3.0": each runtime and engine of the rows with the
    version the run recorded, once each (those without one are left out)."""
    named = [
        f"{row[what]} {row[f'{what}_version']}"
        for row in rows
        for what in ("runtime", "engine")
        if row[what] and row[f"{what}_version"]
    ]
    return " · ".join(dict.fromkeys(named))


# One short line per column (shown under the table for the columns shown): header, meaning.
LEGEND = (
    ("runtime", "what decoded the model"),
    ("engine", "what enforced the constraint mode (-: none)"),
    ("n", "examples scored (skip: a mode the runtime cannot apply)"),
    ("skipped", "examples not decoded (prompt over the context limit)"),
    ("invalid", "dataset rows left out (answer fails its own schema)"),
    ("T", "sampling temperature (n counts generations)"),
    ("cons", "consistency score, mean over prompts"),
    ("STED", "pairwise STED similarity, mean over prompts"),
    ("KL", "mean KL divergence (nats) from the reference (ref)"),
    ("top-1", "share of tokens where it picks the reference's top token"),
    ("TTFT s", "time to first token (w: warm, --prefix-cache)"),
    ("tok/s", "decode tokens/s"),
    ("×none", "tok/s over `none`'s"),
    ("lat s", "latency"),
    ("compile ms", "first compile of a schema"),
    ("cached ms", "the same schema again"),
    ("limit", "answers cut at max_tokens"),
    ("loop", "ended by loop detection"),
    ("closed", "cut-off answers closed (+close)"),
    ("unsup", "schemas the engine refused"),
    ("RSS MiB", "peak resident memory (2^20 bytes)"),
    ("load s", "model load"),
    ("size MB", "model file(s) (10^6 bytes)"),
    ("wall s", "the arm's wall clock"),
    ("throttled", "the Pi's firmware capped the clock during the arm"),
    ("×1st", "tok/s over the first model's, same mode"),
)
# Under the table when a row's `cached ms` is marked `a`.
PER_ANSWER_NOTE = (
    "a: the engine compiles the grammar again in every answer (OpenVINO GenAI's "
    "XGrammar): cached ms is that compile's p50"
)
# The columns a narrow terminal can spare, the first dropped first (the counts that are
# all zero go before them): the arm's labels, its scores, TTFT and tok/s stay; the engine
# goes late (at 80 columns: the modes' names still tell the rows apart).
SPARE = (
    "wall s", "load s", "size MB", "cached ms", "lat s", "total J", "J/prefill tok",
    "J/compliant", "J/exact", "throttled", "compile ms", "×1st", "invalid", "skipped",
    "limit", "loop", "closed", "unsup", "×none", "J/decode tok", "J/answer", "STED",
    "top-1", "engine", "RSS MiB", "F1", "precision", "recall",
)  # fmt: skip


def _zero_only(table: Table) -> list[str]:
    """The count columns with nothing to see (every cell 0 or no value)."""
    return [
        str(column.header)
        for column in table.columns
        if str(column.header) in SPARE and set(map(str, column._cells)) <= {"0", NO_VALUE}
    ]


def compare_view(
    summaries: list[Summary],
    fidelity: list[FidelityRecord | None] | None = None,
    devices: list[Device] | None = None,
) -> Trimmed:
    """`compare_table` as the terminal shows it: rows side by side, the columns a narrow
    console cannot hold dropped (report/fit.py) with a line naming them; a runtime every
    row shares in the title, not a column."""
    table = compare_table(summaries, fidelity, devices, fold_runtime=True)
    table.box = box.SIMPLE_HEAD
    table.show_edge = False
    return Trimmed(table, [*_zero_only(table), *SPARE])


def differences_table(summaries: list[Summary]) -> Table | None:
    """Arm minus arm on the same examples, paired 95% intervals (None: no pair)."""
    rows = [(s, r) for s in summaries for r in difference_rows(s)]
    if not rows:
        return None
    several_runs = len(summaries) > 1
    table = Table(title="differences on the same examples (paired)", title_justify="left")
    if several_runs:
        table.add_column("run")
    for header in DIFFERENCE_HEADERS:
        table.add_column(header, justify="right" if header in ("n", "value") else "left")
    for summary, row in rows:
        prefix = [escape(summary.run_id)] if several_runs else []
        table.add_row(*prefix, *(escape(cell) for cell in row))
    notes = [
        escape(INTERVAL_NOTE),
        "An interval that excludes 0 is a difference beyond resampling noise.",
    ]
    if any(row[3].endswith("*") for _, row in rows):
        notes.insert(0, f"⚠ {INDICATIVE} (n*)")
    table.caption = "\n".join(notes)
    return table
