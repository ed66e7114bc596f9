"""The sweep's plot: accuracy against file size, colour for decode tokens/s, peak RSS
written by each point, the Pareto front (analysis/sweep.py) ringed and joined; in the
style of plots.py (context under the title, n per arm, a legend past three points)."""

from __future__ import annotations

from edgebench.analysis.figures import metric_label
from edgebench.analysis.sweep import Sweep, SweepRow
from edgebench.report.plots import (
    INLINE_LABELS,
    Drawn,
    Plot,
    _drawn,
    _legend_below,
    _plain,
    _png,
    _pyplot,
    _whiskers,
)

NAME = "sweep-pareto"
TITLE = "Which variant: accuracy vs file size vs decode speed vs peak RSS"
CAPTION = (
    "Up and to the left is better: more accurate, smaller file. Colour: decode tokens/s "
    "p50 (brighter is faster); beside each point its peak RSS. Ringed points joined by "
    "the dashed line are on the Pareto front of all four (accuracy, file size, decode "
    "tok/s, peak RSS): no other point is as good on all of them and better on one. "
    "Whiskers: the accuracy's 95% bootstrap interval. Marker shape: constraint mode."
)
MARKERS = ("o", "s", "^", "D", "v", "P")


def _label(row: SweepRow, several_modes: bool) -> str:
    name = row.quantization or row.model
    return f"{name} · {row.constraint}" if several_modes else name


def sweep_plot(sweep: Sweep) -> Drawn | None:
    rows = [r for r in sweep.rows if r.accuracy is not None and r.size_mb is not None]
    if len(rows) < 2:
        return None
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(8, 5.2), layout="constrained")
    modes = list(dict.fromkeys(r.constraint for r in rows))
    speeds = [r.decode_tok_s for r in rows if r.decode_tok_s is not None]
    low, high = (min(speeds), max(speeds)) if speeds else (0.0, 1.0)
    norm = plt.Normalize(vmin=low, vmax=high if high > low else low + 1)
    cmap = plt.get_cmap("viridis")
    crowded = len(rows) > INLINE_LABELS
    for i, row in enumerate(rows):
        speed = row.decode_tok_s
        color = cmap(norm(speed)) if speed is not None else "0.6"
        marker = MARKERS[modes.index(row.constraint) % len(MARKERS)]
        edge = {"edgecolors": "black", "linewidths": 2.0} if row.on_front else {}
        ax.scatter([row.size_mb], [row.accuracy], s=140, color=color, marker=marker, **edge)
        whisker = _whiskers([row.accuracy], [row.arm.intervals.get(sweep.metric)])
        if whisker:
            ax.errorbar(
                [row.size_mb], [row.accuracy], yerr=whisker, fmt="none", ecolor="0.3", capsize=4
            )
        rss = f"{row.peak_rss_mb:.0f} MiB" if row.peak_rss_mb is not None else "RSS ?"
        tok = f"{speed:.0f} tok/s" if speed is not None else "tok/s ?"
        front = ", front" if row.on_front else ""
        text = _plain(
            f"{_label(row, len(modes) > 1)} (n={row.arm.result.n_scored}) · {rss} · {tok}{front}"
        )
        ax.annotate(
            str(i + 1) if crowded else text,
            (row.size_mb, row.accuracy),
            fontsize=8,
            xytext=(9, 4),
            textcoords="offset points",
        )
        if crowded:
            ax.scatter([], [], s=40, color=color, marker=marker, label=f"{i + 1}: {text}")
    front = sorted((r for r in rows if r.on_front), key=lambda r: (r.size_mb, r.accuracy))
    if len(front) > 1:
        ax.plot(
            [r.size_mb for r in front],
            [r.accuracy for r in front],
            linestyle="--",
            color="black",
            linewidth=1,
            label="Pareto front" if crowded else None,
        )
    bar = figure.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax)
    bar.set_label("decode tokens/s (p50), higher is better")
    if crowded:
        _legend_below(figure, ax, 2)
    ax.set_xlabel("model file size (MB), lower is better")
    ax.set_ylabel(f"{_plain(metric_label(sweep.metric))}, higher is better")
    ax.set_ylim(-0.05, 1.15)
    ax.margins(x=0.25)
    arms = [r.arm for r in sweep.rows]
    return _drawn(figure, NAME, TITLE, CAPTION, arms)


def sweep_plots(sweep: Sweep) -> list[Plot]:
    """The plot as PNG bytes (none with fewer than two points)."""
    drawn = sweep_plot(sweep)
    if drawn is None:
        return []
    return [Plot(drawn.name, drawn.title, drawn.caption, _png(_pyplot(), drawn.figure))]
