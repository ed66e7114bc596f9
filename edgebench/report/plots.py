"""The plots of cards and reports, as PNG bytes (matplotlib, Agg backend, no display).

Every plot takes arms (one model under one constraint mode) and draws whatever they hold:
the breakdowns (`by_*`) they have, the metrics they have, one bar or box per arm."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edgebench.errors import UserError
from edgebench.report.facts import metric_label
from edgebench.report.rundata import Arm, numeric

# The accuracy metrics plotted when a run has them, most telling first; a run with
# other metric families plots its first ones instead.
PREFERRED_METRICS = ("field_f1", "schema_compliance", "json_exact", "valid_json")
MAX_PLOTTED_METRICS = 3
MAX_GROUP_VALUES = 12
# Per-schema results are a table: a plot of 25 schemas says less than the table does.
TABLE_ONLY_GROUPS = ("schema",)
_DPI = 100
# Examples nothing was decoded for: their "latency" is not one.
_UNDECODED = ("unsupported", "skipped")


@dataclass(frozen=True)
class Plot:
    name: str  # file stem, e.g. "accuracy-by-complexity"
    title: str  # alt text and caption
    png: bytes


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UserError("plots need matplotlib: pip install 'edgebench[report]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plotted_metrics(arms: Sequence[Arm]) -> list[str]:
    available: dict[str, None] = {}
    for arm in arms:
        available.update(dict.fromkeys(arm.metrics))
    chosen = [m for m in PREFERRED_METRICS if m in available]
    return (chosen or list(available))[:MAX_PLOTTED_METRICS]


def arm_labels(arms: Sequence[Arm]) -> list[str]:
    """The shortest labels that tell the arms apart: the constraint mode, then the
    model, then the run."""
    candidates = (
        lambda a: a.constraint,
        lambda a: f"{a.model} · {a.constraint}",
        lambda a: f"{a.run.run_id} · {a.model} · {a.constraint}",
    )
    for make in candidates:
        labels = [_plain(make(arm)) for arm in arms]
        if len(set(labels)) == len(labels):
            return labels
    return [_plain(f"{i + 1}: {arm.key}") for i, arm in enumerate(arms)]


def _plain(label: Any) -> str:
    """Text for matplotlib, which reads `$...$` as math: a label from a model or a
    dataset must show as it is and never fail to parse."""
    return str(label).replace("$", r"\$")


def _png(plt: Any, figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def _legend_below(figure: Any, ax: Any, entries: int) -> None:
    """One legend for the whole figure, under the plots, where it hides no bar."""
    handles, labels = ax.get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(entries, 3),
        fontsize="small",
        frameon=False,
    )


def _grouped_bars(ax: Any, categories: list[str], series: dict[str, list[float]]) -> None:
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        positions = [c + (i - (len(series) - 1) / 2) * width for c in range(len(categories))]
        ax.bar(positions, values, width, label=label)
    ax.set_xticks(range(len(categories)), categories, rotation=20 if len(categories) > 4 else 0)


def _natural(value: str) -> tuple[int, float, str]:
    """Depths 3, 4, 10 in that order; words alphabetically after numbers."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _group_score(arm: Arm, group: str, value: str, metric: str) -> float:
    """One arm's mean of `metric` over the examples with that group value; NaN (no bar)
    when the arm has none."""
    scores = arm.groups.get(group, {}).get(value)
    if scores is None:
        return float("nan")
    return numeric(scores).get(metric, float("nan"))


def accuracy_by_group(arms: Sequence[Arm]) -> list[Plot]:
    """One plot per breakdown with a handful of values (complexity, depth, domain ...):
    each plotted metric per value, one bar per arm."""
    metrics = plotted_metrics(arms)
    if not metrics:
        return []
    names: dict[str, None] = {}
    for arm in arms:
        names.update(dict.fromkeys(arm.groups))
    plots = []
    labels = arm_labels(arms)
    for name in names:
        values = sorted(
            {str(v) for arm in arms for v in arm.groups.get(name, {})},
            key=_natural,
        )
        if name in TABLE_ONLY_GROUPS or not values or len(values) > MAX_GROUP_VALUES:
            continue
        plt = _pyplot()
        figure, axes = plt.subplots(
            1,
            len(metrics),
            figsize=(3.6 * len(metrics) + 1, 3.6 + 0.25 * len(arms)),
            squeeze=False,
            layout="constrained",
        )
        for ax, metric in zip(axes[0], metrics, strict=True):
            series = {
                label: [_group_score(arm, name, v, metric) for v in values]
                for label, arm in zip(labels, arms, strict=True)
            }
            _grouped_bars(ax, [_plain(v) for v in values], series)
            ax.set_title(_plain(metric_label(metric)))
            ax.set_ylim(0, 1.05)
        axes[0][0].set_ylabel("mean over examples")
        _legend_below(figure, axes[0][0], len(arms))
        figure.suptitle(_plain(f"Accuracy by {name}"))
        slug = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "group"
        plots.append(Plot(f"accuracy-by-{slug}", f"Accuracy by {name}", _png(plt, figure)))
    return plots


def constraint_modes(arms: Sequence[Arm]) -> Plot | None:
    """Accuracy and decode tokens/s side by side for the constraint modes (needs two)."""
    if len(arms) < 2:
        return None
    plt = _pyplot()
    metrics = plotted_metrics(arms)
    labels = arm_labels(arms)
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(10, 4 + 0.25 * len(arms)), layout="constrained"
    )
    series = {
        label: [arm.metrics.get(m, 0.0) for m in metrics]
        for label, arm in zip(labels, arms, strict=True)
    }
    _grouped_bars(left, [_plain(metric_label(m)) for m in metrics], series)
    left.set_ylim(0, 1.05)
    left.set_title("accuracy")
    _legend_below(figure, left, len(arms))
    p50 = [arm.result.perf.decode_tok_s.p50 or 0.0 for arm in arms]
    p95 = [arm.result.perf.decode_tok_s.p95 or 0.0 for arm in arms]
    positions = range(len(arms))
    right.bar(positions, p50, color=[f"C{i % 10}" for i in positions], label="p50")
    right.scatter(positions, p95, color="black", marker="_", s=200, label="p95", zorder=3)
    right.set_xticks(positions, labels, rotation=20 if len(arms) > 3 else 0)
    right.set_ylabel("decode tokens/s")
    right.set_title("decode speed (p50 bar, p95 mark)")
    right.legend(fontsize="small")
    figure.suptitle("Constrained vs unconstrained decoding")
    return Plot("constraint-modes", "Constrained vs unconstrained decoding", _png(plt, figure))


def latency_distribution(arms: Sequence[Arm]) -> Plot | None:
    """Per-example latency (request to last token) for each arm: box and points."""
    data = [
        [s.timings.latency_s for s in arm.samples if s.finish_reason not in _UNDECODED]
        for arm in arms
    ]
    if not any(data):
        return None
    plt = _pyplot()
    labels = arm_labels(arms)
    figure, ax = plt.subplots(figsize=(max(6, 1.6 * len(arms) + 2), 4), layout="constrained")
    ax.boxplot([d or [float("nan")] for d in data], showfliers=False)
    for i, values in enumerate(data, start=1):
        jitter = [i + 0.15 * ((k * 0.618) % 1 - 0.5) for k in range(len(values))]
        ax.scatter(jitter, values, s=10, alpha=0.6, color=f"C{(i - 1) % 10}")
    ax.set_xticks(range(1, len(arms) + 1), labels, rotation=20 if len(arms) > 3 else 0)
    ax.set_ylabel("latency per example (s)")
    ax.set_title("Latency distribution")
    return Plot("latency", "Latency distribution", _png(plt, figure))


def accuracy_speed_memory(arms: Sequence[Arm]) -> Plot | None:
    """Each arm as a point: accuracy against p50 decode tokens/s, the marker's area
    proportional to peak RSS."""
    metrics = plotted_metrics(arms)
    points = [
        (
            label,
            arm.result.perf.decode_tok_s.p50,
            arm.metrics.get(metrics[0]) if metrics else None,
            arm.result.perf.peak_rss_mb,
        )
        for label, arm in zip(arm_labels(arms), arms, strict=True)
    ]
    points = [p for p in points if p[1] is not None and p[2] is not None]
    if not points:
        return None
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    biggest = max((p[3] or 0) for p in points) or 1
    for i, (label, speed, accuracy, rss) in enumerate(points):
        size = 60 + 1400 * (rss or 0) / biggest
        ax.scatter([speed], [accuracy], s=size, alpha=0.55, color=f"C{i % 10}")
        rss_text = f"{rss:.0f} MB" if rss is not None else "RSS ?"
        ax.annotate(
            f"{label}\n{rss_text}",
            (speed, accuracy),
            fontsize=8,
            ha="center",
            va="bottom",
            xytext=(0, math.sqrt(size / math.pi) + 2),  # just above the marker
            textcoords="offset points",
        )
    ax.set_xlabel("decode tokens/s (p50)")
    ax.set_ylabel(_plain(metric_label(metrics[0])))
    ax.set_ylim(-0.05, 1.15)
    ax.margins(x=0.2)
    ax.set_title("Accuracy vs decode speed (marker area: peak RSS)")
    return Plot("accuracy-speed-memory", "Accuracy vs decode speed vs peak RSS", _png(plt, figure))


def all_plots(arms: Sequence[Arm]) -> list[Plot]:
    plots = accuracy_by_group(arms)
    plots += [
        p
        for p in (constraint_modes(arms), latency_distribution(arms), accuracy_speed_memory(arms))
        if p is not None
    ]
    return plots
