"""Terminal views of a run: the end-of-run summary tables (the live progress bar is
cli/progress.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from edgebench.analysis.figures import METRIC_LABELS
from edgebench.analysis.rundata import COUNT_KEYS
from edgebench.report.coverage import coverage_table
from edgebench.report.facts import INDICATIVE, NO_VALUE, SKIPPED_LABEL, indicative, interval_text
from edgebench.report.fit import fitted
from edgebench.runfolder.records import ArmSummary, Perf, Summary
from edgebench.system.cpu_share import CONTENDED_SHARE
from edgebench.tasks import TASKS

# The group an accuracy table breaks results down by, when the run has it, then a second
# breakdown shown under the first one in the same table (DeepJSONEval's tiers), its rows
# in reading order rather than the summary's alphabetical one: as each task declares them.
_PREFERRED_GROUPS = tuple(
    dict.fromkeys(info.table_groups[0] for info in TASKS.values() if info.table_groups)
)
_SECOND_GROUP = {
    info.table_groups[0]: info.table_groups[1]
    for info in TASKS.values()
    if len(info.table_groups) > 1
}
_ROW_ORDER = {group: rows for info in TASKS.values() for group, rows in info.row_order.items()}
# Tables of their own, not breakdowns of the headline table.
_OWN_TABLES = ("element_type",)


def _header(name: str) -> str:
    return METRIC_LABELS.get(name, name)


def table_group(groups: dict[str, Any]) -> str | None:
    names = [g for g in groups if g not in _OWN_TABLES]
    preferred = [g for g in _PREFERRED_GROUPS if g in names]
    return (preferred or names or [None])[0]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


@dataclass(frozen=True)
class _Section:
    """The rows of one arm in a table of several: its label cells (model, constraint) on
    its first row, then `_section_rows`."""

    labels: tuple[str, ...]
    rows: list[tuple[str, dict[str, Any], bool, bool]]


def _group_table(
    title: str,
    names: list[str],
    sections: list[_Section],
    group: str | None,
    label_headers: tuple[str, ...] = (),
) -> Table:
    """One row per group value, a bold overall row, arm by arm: the arm's labels (when
    the table holds several), `n` (the examples scored), the examples skipped, then one
    column per figure (no value where a row has no scored example)."""
    table = Table(title=escape(title), title_justify="left")
    for header in label_headers:
        table.add_column(escape(header), no_wrap=True)
    table.add_column(escape(group or ""))
    table.add_column("n", justify="right")
    table.add_column(SKIPPED_LABEL, justify="right")
    for name in names:
        table.add_column(_header(name), justify="right")
    for section in sections:
        for position, (value, scores, bold, last) in enumerate(section.rows):
            labels = section.labels if position == 0 else ("",) * len(section.labels)
            style = "[bold]" if bold else ""
            cells = (f"{style}{cell}" for cell in _row_cells(scores, names))
            table.add_row(*map(escape, labels), f"{style}{escape(value)}", *cells, end_section=last)
    return table


def _section_rows(
    rows: dict[str, dict[str, Any]],
    more_rows: dict[str, dict[str, Any]] | None = None,
    overall: dict[str, Any] | None = None,
) -> list[tuple[str, dict[str, Any], bool, bool]]:
    """(value, figures, bold, ends a section): a group's rows, a second group's (a
    section of their own) and the bold overall."""
    blocks = [[(v, f, False) for v, f in rows.items()]]
    blocks.append([(v, f, False) for v, f in (more_rows or {}).items()])
    blocks.append([("overall", overall, True)] if overall is not None else [])
    return [
        (value, figures, bold, position == len(block) - 1)
        for block in blocks
        for position, (value, figures, bold) in enumerate(block)
    ]


def _row_cells(scores: dict[str, Any], names: list[str]) -> list[str]:
    counts = [_fmt(scores.get("n")), str(scores.get("n_skipped", 0))]
    return counts + [_fmt(scores.get(m)) for m in names]


@dataclass(frozen=True)
class _Arms:
    """The arms a run's tables show (those that ran), and how each is labelled: by model
    when there are several models, by constraint mode when there are several arms."""

    summary: Summary
    arms: list[ArmSummary]

    @property
    def headers(self) -> tuple[str, ...]:
        several_models = len({a.model for a in self.arms}) > 1
        return (("model",) if several_models else ()) + (
            ("constraint",) if len(self.arms) > 1 else ()
        )

    def labels(self, arm: ArmSummary) -> tuple[str, ...]:
        return tuple(arm.model if h == "model" else arm.constraint for h in self.headers)

    def title(self, what: str) -> str:
        """ "what" of the run's only arm with its model and counts, or of every arm."""
        if len(self.arms) == 1:
            arm = self.arms[0]
            return (
                f"{arm.model} · {what} · {counts_label(arm, self.summary)} · "
                f"constraint {arm.constraint}"
            )
        return f"{self.every} · {what} · {self.summary.n_invalid_data} invalid data"

    @property
    def every(self) -> str:
        """Whose rows a table of several arms holds."""
        models = list(dict.fromkeys(a.model for a in self.arms))
        if len(models) == 1:
            return f"{models[0]} · every constraint mode"
        return "every model and constraint mode"


def _shown_arms(summary: Summary) -> _Arms:
    """Every arm that ran (a mode its runtime cannot apply has no figures; `compare`
    lists it as skipped); the first arm when none ran."""
    ran = [a for a in summary.arms if a.task is not None]
    return _Arms(summary, ran or summary.arms[:1])


def accuracy_table(shown: _Arms) -> Table:
    """The task's own scores (EdgeJSON: JSONExact, F1, ...; roundtrip: CSA, NTED, ...)
    by the group that says the most (depth, complexity ...), for every arm."""
    first = shown.arms[0]
    group = table_group(first.groups)
    names = [k for k in first.metrics if k not in COUNT_KEYS]
    second_group = _SECOND_GROUP.get(group or "", "")
    sections = []
    for arm in shown.arms:
        groups = arm.groups
        rows = groups.get(group) or {} if group else {}
        second = _in_order(groups.get(second_group) or {}, _ROW_ORDER.get(second_group, ()))
        sections.append(_Section(shown.labels(arm), _section_rows(rows, second, arm.metrics)))
    table = _group_table(shown.title(shown.summary.task), names, sections, group, shown.headers)
    skipped = {a.n_skipped for a in shown.arms}
    if any(skipped):
        count = f"{max(skipped)}" if len(skipped) == 1 else "some"
        table.caption = (
            f"{count} examples skipped, not scored: their prompt does not fit "
            "the context limit (reasons in samples.jsonl)"
        )
    return table


def counts_label(arm: ArmSummary, summary: Summary) -> str:
    """ "18 scored · 7 skipped · 0 invalid data": what the rates are over, and what not."""
    return (
        f"{arm.n_scored} scored · {arm.n_skipped} skipped · {summary.n_invalid_data} invalid data"
    )


def _in_order(rows: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """`rows` with the values named in `order` first, in that order, then the others."""
    rank = {value: position for position, value in enumerate(order)}
    return dict(sorted(rows.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def element_type_table(shown: _Arms) -> Table | None:
    """Key-matching per leaf element type, pooled over fields, for every arm that has it."""
    with_types = [a for a in shown.arms if "element_type" in a.groups]
    if not with_types:
        return None
    table = Table(title="key matching by leaf element type", title_justify="left")
    for header in shown.headers:
        table.add_column(escape(header), no_wrap=True)
    for column in ("element type", "examples", "fields", "Key match"):
        table.add_column(column, justify="left" if column == "element type" else "right")
    for arm in with_types:
        rows = arm.groups["element_type"]
        for position, (kind, row) in enumerate(rows.items()):
            labels = shown.labels(arm) if position == 0 else ("",) * len(shown.headers)
            table.add_row(
                *map(escape, labels),
                escape(kind),
                str(row["n"]),
                str(row["fields"]),
                _fmt(row["key_matching"]),
                end_section=position == len(rows) - 1,
            )
    return table


def family_tables(shown: _Arms) -> list[Table]:
    """One table per metric family other than the task's own (`--metrics`), by group
    (complexity, depth) and overall, for every arm."""
    tables = []
    for name, result in shown.arms[0].families.items():
        if result.role == "task":
            continue
        group = table_group(result.groups)
        sections = []
        for arm in shown.arms:
            family = arm.families.get(name)
            if family is None:
                continue
            rows = family.groups.get(group) or {} if group else {}
            sections.append(_Section(shown.labels(arm), _section_rows(rows, None, family.overall)))
        title = f"metric family {name}"
        if len(shown.arms) > 1:
            title += f" · {shown.every}"
        names = list(result.higher_is_better)
        tables.append(_group_table(title, names, sections, group, shown.headers))
    return tables


_PERF_ROWS = (
    ("latency (s)", "latency_s", 3),
    ("prefill tok/s", "prefill_tok_s", 1),
    ("decode tok/s", "decode_tok_s", 1),
)


def perf_table(shown: _Arms) -> Table:
    """p50 with its 95% interval, p95 and mean of TTFT, latency, prefill and decode
    tokens/s, arm by arm."""
    table = Table(title="performance", title_justify="left")
    for header in shown.headers:
        table.add_column(escape(header), no_wrap=True)
    table.add_column("measure")
    for column in ("p50", "p50 95% CI", "p95", "mean"):
        table.add_column(column, justify="right")
    for arm in shown.arms:
        perf = arm.perf
        rows = (
            ("TTFT warm (s)" if perf.ttft_warm else "TTFT (s)", "ttft_s", 3),
            *_PERF_ROWS,
        )
        for position, (label, key, digits) in enumerate(rows):
            labels = shown.labels(arm) if position == 0 else ("",) * len(shown.headers)
            dist = getattr(perf, key)
            table.add_row(
                *map(escape, labels),
                label,
                _fmt(dist.p50, digits),
                interval_text(perf.p50_ci95.get(key), digits) or NO_VALUE,
                *(_fmt(v, digits) for v in (dist.p95, dist.mean)),
                end_section=position == len(rows) - 1,
            )
    table.caption = (
        "p50 95% CI: bootstrap interval of the p50 over the examples (2,000 resamples, seed 0)."
    )
    return table


def totals_line(perf: Perf) -> str:
    parts = [
        f"load {_fmt(perf.load_s, 2)} s",
        f"peak RSS {_fmt(perf.peak_rss_mb, 0)} MiB",
        f"(anon {_fmt(perf.peak_rss_anon_mb, 0)}, file {_fmt(perf.peak_rss_file_mb, 0)})",
        f"tokens in/out {perf.prompt_tokens_total}/{perf.output_tokens_total}",
        f"hit max_tokens {perf.hit_token_limit}",
        f"stopped at JSON {perf.stopped_at_json}",
        f"loops {perf.loops}",
        *([f"closed {perf.closed}"] if perf.closed else []),
        f"tokens after answer {perf.tokens_after_answer_total}",
        f"wall {_fmt(perf.wall_s, 1)} s",
    ]
    return " · ".join(parts)


def _totals(shown: _Arms) -> list[str]:
    """The totals line of each arm, after the arm's labels when there are several."""
    if len(shown.arms) == 1:
        return [escape(totals_line(shown.arms[0].perf))]
    return [
        f"[bold]{escape(' · '.join(shown.labels(arm)))}[/]: {escape(totals_line(arm.perf))}"
        for arm in shown.arms
    ]


def contention_note(perf: Perf) -> str | None:
    """Why an arm's speed is not clean, in words (None: clean, or not measured)."""
    if not perf.contended_examples:
        return None
    return (
        f"{perf.contended_examples} of {perf.latency_s.n} timed examples were decoded while "
        "other processes or virtual machines took more than "
        f"{100 * CONTENDED_SHARE:g}% of the CPU (after re-timing); its speed figures are "
        "disturbed"
    )


def _not_clean(shown: _Arms) -> list[str]:
    """One `not clean` line per arm whose speed is not, as `edgebench bench` prints."""
    lines = []
    for arm in shown.arms:
        note = contention_note(arm.perf)
        if note is not None:
            label = " · ".join(shown.labels(arm))
            lines.append(f"[yellow]not clean:[/] {escape(f'{label}: ' if label else '')}{note}")
    return lines


def render_summary(summary: Summary) -> Group:
    """Every arm (model x constraint mode) that ran, labelled: the task's scores and each
    metric family's by group, speed in detail; with several arms, then all of them side by
    side with their paired differences. Every table fits the console (report/fit.py)."""
    shown = _shown_arms(summary)
    tables: list[Table | None] = [
        accuracy_table(shown),
        element_type_table(shown),
        *family_tables(shown),
        perf_table(shown),
    ]
    parts: list[Any] = [fitted(*tables), *_totals(shown), *_not_clean(shown)]
    if len(summary.arms) > 1:
        from edgebench.report.compare import compare_table, differences_table

        parts.append(fitted(compare_table([summary]), differences_table([summary])))
    parts.append(fitted(coverage_table([summary])))
    n_scored = min(a.n_scored for a in shown.arms)
    if indicative(n_scored):  # the last line a user reads
        parts.append(f"[bold yellow]⚠ {INDICATIVE}[/]: {n_scored} examples scored.")
    return Group(*parts)


def consistency_table(summary: Summary) -> Table:
    """One row per temperature: how much the N answers to each prompt agree (mean over
    prompts), next to the task's own accuracy of all generations."""
    result = summary.consistency
    assert result is not None
    seeds = result.seeds
    title = (
        f"{summary.models[0]} · {summary.task} · consistency over "
        f"{result.samples_per_prompt} samples per prompt"
        + (f" (seeds {seeds[0]}-{seeds[-1]})" if seeds else "")
    )
    rows = result.by_temperature
    # Valid JSON and the task's headline score (JSONExact, CSA, ...) of all generations.
    known = next((list(r.task_metrics) for r in rows.values()), [])
    headline = [n for n in known if n not in ("n", "valid_json")][:1]
    task_names = (["valid_json"] if "valid_json" in known else []) + headline
    table = Table(title=escape(title), title_justify="left")
    columns = ["temperature", "prompts", *map(_header, task_names)]
    columns += ["STED mean", "STED std", "consistency", "structural", "semantic"]
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index == 0 else "right")
    for key, row in rows.items():
        table.add_row(
            key,
            str(row.n_prompts),
            *(_fmt(row.task_metrics.get(n)) for n in task_names),
            _fmt(row.sted_mean),
            _fmt(row.sted_std),
            _fmt(row.consistency),
            _fmt(row.consistency_structural),
            _fmt(row.consistency_semantic),
        )
    return table


def render_consistency(summary: Summary) -> Group:
    shown = _shown_arms(summary)
    return Group(
        fitted(consistency_table(summary), perf_table(shown)), *_totals(shown), *_not_clean(shown)
    )


def render(summary: Summary) -> Group:
    """The terminal view of a run of any kind."""
    return render_consistency(summary) if summary.consistency else render_summary(summary)
