"""A sweep (analysis/sweep.py) as the terminal table, the card's Markdown table and the
report's JSON rows: the same rows, so they always agree."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from edgebench.analysis.figures import metric_label
from edgebench.analysis.sweep import Sweep, SweepRow
from edgebench.report import facts
from edgebench.report import markdown as md
from edgebench.report.compare import ACCURACY, DEEPJSON_ACCURACY, with_interval

REQUANTIZED_MARK = "†"
FRONT_MARK = {True: "yes", False: "no"}
SWEEP_NOTE = (
    "One row per variant and constraint mode. front: on the Pareto front of accuracy ↑, "
    "file size ↓, decode tok/s ↑ and peak RSS ↓ (no other row is as good on all four and "
    "better on one). KL: mean KL divergence of the next-token distribution from the most "
    "precise variant's (↓); top-1: share of positions with its same next token (↑); "
    "both teacher-forced on the run's prompts and expected answers. tok/s: p50 over "
    "examples. size: the model file (MB = 10^6 bytes); peak RSS: the arm's worker "
    "(MiB = 2^20 bytes)."
)


# -- the table's columns: (header, how to read a row, digits) -------------------------
COST_COLUMNS: tuple[tuple[str, Any, int], ...] = (
    ("KL ↓", lambda r: r.kl_mean, 4),
    ("top-1 ↑", lambda r: r.top1, 3),
    ("decode tok/s ↑", lambda r: r.decode_tok_s, 1),
    ("prefill tok/s ↑", lambda r: r.prefill_tok_s, 1),
    ("peak RSS MiB ↓", lambda r: r.peak_rss_mb, 0),
    ("size MB ↓", lambda r: r.size_mb, 1),
)


def _quant(row: SweepRow) -> str:
    text = row.quantization or facts.NO_VALUE
    return text + REQUANTIZED_MARK if row.note else text


# The row's labels before its figures: what ran, on which runtime, under which engine.
LABELS = ("variant", "quant", "runtime", "mode", "engine")


def headers(sweep: Sweep) -> list[str]:
    scores = [f"{metric_label(m)} ↑" for m in sweep.scores]
    return [*LABELS, "n", *scores, *(h for h, _, _ in COST_COLUMNS), "front"]


def cells(sweep: Sweep, row: SweepRow, intervals: bool = True) -> list[str]:
    """A row's cells as text; a score with its 95% interval after it."""
    scores = []
    for name in sweep.scores:
        interval = row.arm.intervals.get(name)
        text = facts.fmt(row.arm.metrics.get(name))
        scores.append(f"{text} {facts.interval_text(interval)}".strip() if intervals else text)
    costs = [facts.fmt(read(row), digits) for _, read, digits in COST_COLUMNS]
    result = row.arm.result
    return [
        row.model,
        _quant(row),
        facts.runtime_cell(result),
        row.constraint,
        facts.engine_cell(result),
        str(result.n_scored),
        *scores,
        *costs,
        FRONT_MARK[row.on_front],
    ]


def footnotes(sweep: Sweep) -> list[str]:
    """What the table's marks mean: the requantized notes, fidelity missing."""
    notes = [f"{REQUANTIZED_MARK} {note}." for note in sweep.notes]
    if sweep.fidelity is None:
        notes.append("KL, top-1: no fidelity.json in this run (`edgebench fidelity RUN`).")
    else:
        notes.append(
            f"KL, top-1 against {sweep.fidelity.reference} "
            f"({sweep.fidelity.reference_quantization or '?'}) over "
            f"{facts.fmt(sweep.fidelity.positions)} token positions."
        )
    if any(facts.indicative(r.arm.result.n_scored) for r in sweep.rows):
        notes.append(f"⚠ {facts.INDICATIVE}: a front drawn on few examples can move.")
    return notes


# The terminal's short headers, as `edgebench compare` names the same figures.
SHORT_SCORES = {key: header for header, key, _, _ in (*ACCURACY, *DEEPJSON_ACCURACY)}
SHORT_COSTS = ("KL", "top-1", "tok/s", "prefill", "RSS MiB", "size MB")


def sweep_table(sweep: Sweep, fold_runtime: bool = False) -> Table:
    """The terminal table, headers as short as `compare`'s and each interval under its
    score (report/fit.py splits it at 80 columns, names and numbers whole). With
    `fold_runtime` (the terminal), a runtime every row shares is said in the title
    instead of a column, as `compare` does."""
    metric = metric_label(sweep.metric)
    kind = "sweep" if sweep.several_variants else "constraint modes"
    runtimes = {facts.runtime_cell(row.arm.result) for row in sweep.rows}
    fold = fold_runtime and len(runtimes) == 1
    title = f"{kind} · {sweep.run.run_id}"
    title += f" · runtime {next(iter(runtimes))}" if fold else ""
    table = Table(
        title=escape(f"{title} · front on {metric}"),
        title_justify="left",
        caption_justify="left",
    )
    at = LABELS.index("runtime")
    labels = [h for h in LABELS if not (fold and h == "runtime")]
    for header in labels:
        table.add_column(header, no_wrap=True)
    shown = [SHORT_SCORES.get(m, metric_label(m)) for m in sweep.scores]
    for header in ("n", *shown, *SHORT_COSTS, "front"):
        table.add_column(escape(header), justify="right")
    for row in sweep.rows:
        texts = cells(sweep, row, intervals=False)
        first = len(LABELS) + 1  # the first score, after the labels and n
        scores = [
            with_interval(texts[first + i], row.arm.intervals.get(m))
            for i, m in enumerate(sweep.scores)
        ]
        texts = [*texts[:first], *scores, *texts[first + len(scores) :]]
        if fold:
            del texts[at]
        table.add_row(*map(escape, texts))
    legend = (
        "↑ higher is better: the scores, top-1, tok/s (decode), prefill (tok/s); ↓ lower: "
        "KL, RSS MiB, size MB. Under a score: its 95% interval lo–hi (.55 = 0.55)."
    )
    table.caption = escape("\n".join([*footnotes(sweep), legend, SWEEP_NOTE]))
    return table


def sweep_markdown(sweep: Sweep) -> str:
    """The card's table, its notes under it."""
    rows = [cells(sweep, row) for row in sweep.rows]
    notes = "\n\n".join(md.text(n) for n in [*footnotes(sweep), SWEEP_NOTE])
    table = md.table(headers(sweep), rows, align_right_from=len(LABELS))
    return f"{table}\n\n{notes}"


def sweep_json(sweep: Sweep) -> list[dict[str, Any]]:
    """The rows as numbers, for `--json`."""
    return [
        {
            "model": r.model,
            "quantization": r.quantization,
            "runtime": facts.arm_runtime(r.arm.result),
            "constraint": r.constraint,
            "engine": r.arm.result.engine,
            "n": r.arm.result.n_scored,
            "scores": {m: r.arm.metrics.get(m) for m in sweep.scores},
            "ci95": {m: r.arm.intervals.get(m) for m in sweep.scores},
            "accuracy": r.accuracy,
            "kl_mean": r.kl_mean,
            "top1_agreement": r.top1,
            "decode_tok_s_p50": r.decode_tok_s,
            "decode_tok_s_p50_ci95": r.arm.result.perf.p50_ci95.get("decode_tok_s"),
            "prefill_tok_s_p50": r.prefill_tok_s,
            "peak_rss_mib": r.peak_rss_mb,
            "size_mb": r.size_mb,
            "on_front": r.on_front,
            "dominated_by": list(r.dominated_by),
            "note": r.note,
        }
        for r in sweep.rows
    ]
