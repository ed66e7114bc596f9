"""The plots of cards and reports, as PNG bytes (matplotlib, Agg backend, no display).

Every plot takes arms (one model under one constraint mode) and draws whatever they hold:
the breakdowns (`by_*`) they have, the metrics they have, one bar or box per arm. Each
carries its context (models, quantization, device, n) under its title, n per group on its
axis, the 95% intervals of summary.json as whiskers, and a measured 0 as a labelled stub
so it never looks like "not measured"."""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from edgebench.analysis.figures import PREFERRED_METRICS, metric_label
from edgebench.analysis.rundata import ArmView, labels_by_run, numeric
from edgebench.errors import UserError
from edgebench.report.facts import device_label
from edgebench.runfolder.records import BenchRow

MAX_PLOTTED_METRICS = 3
MAX_GROUP_VALUES = 12
# Per-schema results are a table: a plot of 25 schemas says less than the table does.
TABLE_ONLY_GROUPS = ("schema",)
_DPI = 100
# Examples nothing was decoded for: their "latency" is not one.
_UNDECODED = ("unsupported", "skipped")
# A measured 0 is drawn as a stub this tall (accuracy axes run to 1.05) and labelled.
ZERO_STUB = 0.012
ZERO_STUB_GID = "zero-stub"
ZERO_TEXT = "0.00"
_CHARS_PER_INCH = 12  # of a plot's context subtitle, so it wraps inside the figure

Interval = list[float] | None


@dataclass(frozen=True)
class Plot:
    name: str  # file stem, e.g. "accuracy-by-complexity"
    title: str  # alt text (the title drawn in the image)
    caption: str  # how to read it: never the title again
    png: bytes


@dataclass(frozen=True)
class Drawn:
    """A plot still as a matplotlib figure, before it becomes PNG bytes."""

    name: str
    title: str
    caption: str
    figure: Any


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UserError("plots need matplotlib: pip install 'edgebench[report]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plotted_metrics(arms: Sequence[ArmView]) -> list[str]:
    available: dict[str, None] = {}
    for arm in arms:
        available.update(dict.fromkeys(arm.metrics))
    chosen = [m for m in PREFERRED_METRICS if m in available]
    return (chosen or list(available))[:MAX_PLOTTED_METRICS]


def arm_labels(arms: Sequence[ArmView]) -> list[str]:
    """The shortest labels that tell the arms apart: the constraint mode, then the
    model, then the run folder, then both."""
    candidates = (
        lambda a: a.constraint,
        lambda a: f"{a.model} · {a.constraint}",
        lambda a: f"{folder_label[id(a.run)]} · {a.constraint}",
        lambda a: f"{folder_label[id(a.run)]} · {a.model} · {a.constraint}",
    )
    # Runs by their folder's unique label, not the recorded run id a copied folder keeps.
    folder_label = labels_by_run(arms)
    for make in candidates:
        labels = [_plain(make(arm)) for arm in arms]
        if len(set(labels)) == len(labels):
            return labels
    return [_plain(f"{i + 1}: {arm.key}") for i, arm in enumerate(arms)]


def _plain(label: Any) -> str:
    """Text for matplotlib, which reads `$...$` as math: a label from a model or a
    dataset must show as it is and never fail to parse."""
    return str(label).replace("$", r"\$")


def count_range(counts: Sequence[int]) -> str:
    """ "12", or "10–12" when arms scored different numbers of examples."""
    low, high = min(counts, default=0), max(counts, default=0)
    return str(low) if low == high else f"{low}–{high}"


def n_text(counts: Sequence[int]) -> str:
    return f"n={count_range(counts)}"


def context(arms: Sequence[ArmView], width: int = 100) -> str:
    """What every plot says under its title: the models with their quantization, the
    device(s), and the examples each arm scored; lines of at most `width` characters."""
    models: dict[str, None] = {}
    devices: dict[str, None] = {}
    for arm in arms:
        record = next((m for m in arm.run.manifest.models if m.label == arm.model), None)
        quantization = record and (record.quantization or record.backend)
        models[f"{arm.model} ({quantization})" if quantization else arm.model] = None
        devices[device_label(arm.run.manifest.device)] = None
    per_arm = n_text([arm.result.n_scored for arm in arms])
    line = " · ".join([", ".join(models), "; ".join(devices), f"{per_arm} per arm"])
    return _plain("\n".join(textwrap.wrap(line, width)))


def _drawn(figure: Any, name: str, title: str, caption: str, arms: Sequence[ArmView]) -> Drawn:
    """The finished plot: its title over the context line of the arms it shows."""
    width = int(figure.get_figwidth() * _CHARS_PER_INCH)
    figure.suptitle(f"{_plain(title)}\n{context(arms, width)}", fontsize="medium")
    return Drawn(name, title, caption, figure)


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


def _whiskers(values: list[float], intervals: list[Interval]) -> list[list[float]] | None:
    """Asymmetric error bars (below, above) from [lo, hi] intervals; NaN draws none."""
    if not any(intervals):
        return None
    below, above = [], []
    for value, interval in zip(values, intervals, strict=True):
        if not interval or math.isnan(value):
            below.append(math.nan)
            above.append(math.nan)
            continue
        lo, hi = interval
        if lo == hi == value:  # nothing to draw but a stray cap
            below.append(math.nan)
            above.append(math.nan)
            continue
        below.append(max(0.0, value - lo))  # a rounded bound may sit past the value
        above.append(max(0.0, hi - value))
    return [below, above]


def _mark_zeros(
    ax: Any, positions: list[float], values: list[float], width: float, color: str
) -> None:
    """A measured 0 as a visible stub labelled 0.00: a missing bar means no examples."""
    for x, value in zip(positions, values, strict=True):
        if value == 0:
            ax.bar([x], [ZERO_STUB], width, color=color, edgecolor="0.2", gid=ZERO_STUB_GID)
            ax.annotate(
                ZERO_TEXT,
                (x, ZERO_STUB),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
            )


def _grouped_bars(
    ax: Any,
    categories: list[str],
    series: dict[str, list[float]],
    intervals: dict[str, list[Interval]],
) -> None:
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        positions = [c + (i - (len(series) - 1) / 2) * width for c in range(len(categories))]
        ax.bar(
            positions,
            values,
            width,
            label=label,
            color=f"C{i % 10}",
            yerr=_whiskers(values, intervals[label]),
            capsize=3,
            error_kw={"elinewidth": 1, "ecolor": "0.2"},
        )
        _mark_zeros(ax, positions, values, width, f"C{i % 10}")
    rotation = 20 if len(categories) > 4 else 0
    ax.set_xticks(range(len(categories)), categories, rotation=rotation)


def _natural(value: str) -> tuple[int, float, str]:
    """Depths 3, 4, 10 in that order; words alphabetically after numbers."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _group_score(arm: ArmView, group: str, value: str, metric: str) -> float:
    """One arm's mean of `metric` over the examples with that group value; NaN (no bar)
    when the arm has none."""
    scores = arm.groups.get(group, {}).get(value)
    if scores is None:
        return float("nan")
    return numeric(scores).get(metric, float("nan"))


def _group_interval(arm: ArmView, group: str, value: str, metric: str) -> Interval:
    return arm.group_intervals.get(group, {}).get(value, {}).get(metric)


def _group_tick(arms: Sequence[ArmView], group: str, value: str) -> str:
    """ "3 (n=12)": a group value and the examples scored in it."""
    counts = [
        int(figures.get("n") or 0)
        for arm in arms
        if (figures := arm.groups.get(group, {}).get(value)) is not None
    ]
    return _plain(f"{value} ({n_text(counts)})")


def arm_ticks(arms: Sequence[ArmView], counts: Sequence[int] | None = None) -> list[str]:
    """Each arm's label with its n (the examples scored, or `counts` when given)."""
    counts = counts if counts is not None else [arm.result.n_scored for arm in arms]
    return [f"{label} (n={n})" for label, n in zip(arm_labels(arms), counts, strict=True)]


ACCURACY_BY_GROUP_CAPTION = (
    "One bar per arm (model and constraint mode) and group of examples, whiskers the 95% "
    "bootstrap interval; n counts the examples scored in each group. A thin stub labelled "
    "0.00 is a measured zero; a missing bar means the arm has no examples in that group."
)


def accuracy_by_group(arms: Sequence[ArmView]) -> list[Drawn]:
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
            figsize=(3.8 * len(metrics) + 1, 4.0 + 0.25 * len(arms)),
            squeeze=False,
            layout="constrained",
        )
        ticks = [_group_tick(arms, name, v) for v in values]
        for ax, metric in zip(axes[0], metrics, strict=True):
            series, intervals = {}, {}
            for label, arm in zip(labels, arms, strict=True):
                series[label] = [_group_score(arm, name, v, metric) for v in values]
                intervals[label] = [_group_interval(arm, name, v, metric) for v in values]
            _grouped_bars(ax, ticks, series, intervals)
            ax.set_title(_plain(metric_label(metric)))
            ax.set_xlabel(_plain(name))
            ax.set_ylim(0, 1.05)
        axes[0][0].set_ylabel("mean over examples")
        _legend_below(figure, axes[0][0], len(arms))
        slug = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "group"
        title = f"Accuracy by {name}"
        plots.append(_drawn(figure, f"accuracy-by-{slug}", title, ACCURACY_BY_GROUP_CAPTION, arms))
    return plots


CONSTRAINT_MODES_CAPTION = (
    "Left: each arm's accuracy over the same examples, whiskers the 95% bootstrap "
    "interval. Right: its median decode speed (bar) and 95th percentile (black mark), "
    "higher is better."
)


def constraint_modes(arms: Sequence[ArmView]) -> Drawn | None:
    """Accuracy and decode tokens/s side by side for the constraint modes (needs two)."""
    if len(arms) < 2:
        return None
    plt = _pyplot()
    metrics = plotted_metrics(arms)
    labels = arm_labels(arms)
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(10, 4.4 + 0.25 * len(arms)), layout="constrained"
    )
    series = {
        label: [arm.metrics.get(m, 0.0) for m in metrics]
        for label, arm in zip(labels, arms, strict=True)
    }
    intervals = {
        label: [arm.intervals.get(m) for m in metrics]
        for label, arm in zip(labels, arms, strict=True)
    }
    _grouped_bars(left, [_plain(metric_label(m)) for m in metrics], series, intervals)
    left.set_ylim(0, 1.05)
    left.set_title("accuracy")
    _legend_below(figure, left, len(arms))
    p50 = [arm.result.perf.decode_tok_s.p50 or 0.0 for arm in arms]
    p95 = [arm.result.perf.decode_tok_s.p95 or 0.0 for arm in arms]
    positions = list(range(len(arms)))
    right.bar(positions, p50, color=[f"C{i % 10}" for i in positions], label="p50")
    right.scatter(positions, p95, color="black", marker="_", s=200, label="p95", zorder=3)
    right.set_xticks(positions, arm_ticks(arms), rotation=20 if len(arms) > 3 else 0)
    right.set_ylabel("decode tokens/s")
    right.set_title("decode speed (p50 bar, p95 mark)")
    right.legend(fontsize="small")
    return _drawn(
        figure,
        "constraint-modes",
        "Constrained vs unconstrained decoding",
        CONSTRAINT_MODES_CAPTION,
        arms,
    )


LATENCY_CAPTION = (
    "Each point is one example, request to last token; the box spans the middle half "
    "with the median, lower is better. n counts the examples decoded."
)


def latency_distribution(arms: Sequence[ArmView]) -> Drawn | None:
    """Per-example latency (request to last token) for each arm: box and points."""
    data = [
        [s.timings.latency_s for s in arm.samples if s.finish_reason not in _UNDECODED]
        for arm in arms
    ]
    if not any(data):
        return None
    plt = _pyplot()
    ticks = arm_ticks(arms, [len(d) for d in data])
    figure, ax = plt.subplots(figsize=(max(6, 1.8 * len(arms) + 2), 4.4), layout="constrained")
    ax.boxplot([d or [float("nan")] for d in data], showfliers=False)
    for i, values in enumerate(data, start=1):
        jitter = [i + 0.15 * ((k * 0.618) % 1 - 0.5) for k in range(len(values))]
        ax.scatter(jitter, values, s=10, alpha=0.6, color=f"C{(i - 1) % 10}")
    ax.set_xticks(range(1, len(arms) + 1), ticks, rotation=20 if len(arms) > 3 else 0)
    ax.set_ylabel("latency per example (s)")
    return _drawn(figure, "latency", "Latency distribution", LATENCY_CAPTION, arms)


ACCURACY_SPEED_MEMORY_CAPTION = (
    "Up and to the right is better: more accurate, faster decoding. The marker's area "
    "grows with peak RSS (also written beside each point): smaller uses less memory. "
    "Whiskers: the accuracy's 95% bootstrap interval."
)


# More points than this and their labels would overlap: numbered, the text in a legend.
INLINE_LABELS = 3


def accuracy_speed_memory(arms: Sequence[ArmView]) -> Drawn | None:
    """Each arm as a point: accuracy against p50 decode tokens/s, the marker's area
    proportional to peak RSS, whiskers the accuracy's interval."""
    metrics = plotted_metrics(arms)
    if not metrics:
        return None
    metric = metrics[0]
    points = [
        (tick, arm.result.perf.decode_tok_s.p50, arm.metrics.get(metric), arm)
        for tick, arm in zip(arm_ticks(arms), arms, strict=True)
    ]
    points = [p for p in points if p[1] is not None and p[2] is not None]
    if not points:
        return None
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(8, 4.8), layout="constrained")
    biggest = max((p[3].result.perf.peak_rss_mb or 0) for p in points) or 1
    for i, (tick, speed, accuracy, arm) in enumerate(points):
        rss = arm.result.perf.peak_rss_mb
        size = 60 + 1400 * (rss or 0) / biggest
        color = f"C{i % 10}"
        ax.scatter([speed], [accuracy], s=size, alpha=0.55, color=color)
        whisker = _whiskers([accuracy], [arm.intervals.get(metric)])
        if whisker:
            ax.errorbar([speed], [accuracy], yerr=whisker, fmt="none", ecolor=color, capsize=4)
        rss_text = f"peak RSS {rss:.0f} MiB" if rss is not None else "peak RSS ?"
        text = f"{tick}\n{_plain(metric_label(metric))} {accuracy:.2f} · {rss_text}"
        crowded = len(points) > INLINE_LABELS
        ax.annotate(
            str(i + 1) if crowded else text,  # a crowded plot: a number, the text below
            (speed, accuracy),
            fontsize=8,
            ha="left",
            va="center",
            xytext=(math.sqrt(size / math.pi) + 4, 0),  # right of the marker, clear of whiskers
            textcoords="offset points",
        )
        if crowded:
            ax.scatter([], [], s=40, alpha=0.55, color=color, label=f"{i + 1}: {text}")
    if len(points) > INLINE_LABELS:
        _legend_below(figure, ax, 2)
    ax.set_xlabel("decode tokens/s (p50), higher is better")
    ax.set_ylabel(f"{_plain(metric_label(metric))}, higher is better")
    ax.set_ylim(-0.05, 1.2)
    ax.margins(x=0.35)
    return _drawn(
        figure,
        "accuracy-speed-memory",
        "Accuracy vs decode speed vs peak RSS",
        ACCURACY_SPEED_MEMORY_CAPTION,
        arms,
    )


TIMELINE_CAPTION = (
    "Time runs left to right from the run's first timeline row (one row a second). Top: "
    "each example's decode tokens/s at the moment it ended, one colour per arm; below, "
    "what the machine let edgebench read: the CPU temperature, the CPU clock (the mean "
    "over cores, the slowest and fastest core as a band), the power a meter read. A "
    "speed that falls while the temperature climbs and the clock drops is throttling."
)


def timeline(arms: Sequence[ArmView]) -> list[Drawn]:
    """Per run with a timeline: decode tokens/s, temperature, clock (and power) against
    time, on one time axis."""
    runs: dict[int, list[ArmView]] = {}
    for arm in arms:
        runs.setdefault(id(arm.run), []).append(arm)
    labels = labels_by_run(arms)
    several = len(runs) > 1
    return [
        drawn
        for run_arms in runs.values()
        if (drawn := _timeline(run_arms, labels[id(run_arms[0].run)] if several else None))
        is not None
    ]


def _timeline(arms: Sequence[ArmView], run_label: str | None) -> Drawn | None:
    rows = arms[0].run.timeline
    if not rows:
        return None
    t0 = rows[0].t
    times = [r.t - t0 for r in rows]
    temps = [r.temp_c if r.temp_c is not None else float("nan") for r in rows]
    clocks = [[f for f in r.freq_mhz if f is not None] for r in rows]
    watts = [r.watts if r.watts is not None else float("nan") for r in rows]
    readable = {
        "temperature": any(t == t for t in temps),  # NaN != NaN: not read
        "clock": any(clocks),
        "power": any(w == w for w in watts),
    }
    if not any(readable.values()):  # speed alone: the latency plot says it
        return None
    panels = ["speed", *(name for name, ok in readable.items() if ok)]
    plt = _pyplot()
    figure, axes = plt.subplots(
        len(panels), 1, figsize=(9, 1.9 * len(panels) + 1.4), sharex=True, layout="constrained"
    )
    ax = dict(zip(panels, axes, strict=True))
    for i, (tick, arm) in enumerate(zip(arm_ticks(arms), arms, strict=True)):
        points = [
            (s.wall.end - t0, s.timings.decode_tok_s)
            for s in arm.samples
            if s.wall is not None and s.timings.decode_tok_s is not None
        ]
        if points:
            x, y = zip(*points, strict=True)
            ax["speed"].scatter(x, y, s=12, color=f"C{i % 10}", label=tick)
    ax["speed"].set_ylabel("decode tok/s")
    if len(arms) > 1:
        ax["speed"].legend(fontsize="small", frameon=False)
    if "temperature" in ax:
        ax["temperature"].plot(times, temps, color="C3")
        ax["temperature"].set_ylabel("CPU °C")
    if "clock" in ax:
        low = [min(c) if c else float("nan") for c in clocks]
        high = [max(c) if c else float("nan") for c in clocks]
        ax["clock"].fill_between(times, low, high, color="C0", alpha=0.2, linewidth=0)
        mean = [sum(c) / len(c) if c else float("nan") for c in clocks]
        ax["clock"].plot(times, mean, color="C0")
        ax["clock"].set_ylabel("CPU MHz")
    if "power" in ax:
        ax["power"].plot(times, watts, color="C2")
        ax["power"].set_ylabel("watts")
    axes[-1].set_xlabel("seconds since the run's first timeline row")
    title = "Speed, temperature and clock over the run"
    name = "timeline"
    if run_label is not None:
        title += f" · {run_label}"
        name += "-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", run_label).strip("-")
    return _drawn(figure, name, title, TIMELINE_CAPTION, arms)


def drawn_plots(arms: Sequence[ArmView]) -> list[Drawn]:
    """Every plot the arms support, the accuracy-speed-memory overview first."""
    overview = accuracy_speed_memory(arms)
    drawn = [overview] if overview is not None else []
    drawn += accuracy_by_group(arms)
    drawn += [p for p in (constraint_modes(arms), latency_distribution(arms)) if p is not None]
    drawn += timeline(arms)
    return drawn


def all_plots(arms: Sequence[ArmView]) -> list[Plot]:
    drawn = drawn_plots(arms)
    if not drawn:
        return []
    plt = _pyplot()
    return [Plot(d.name, d.title, d.caption, _png(plt, d.figure)) for d in drawn]


SPEED_OVER_TIME_CAPTION = (
    "Each point is one timed repetition of a row of `edgebench bench --duration`, at the "
    "middle of its interval on the wall clock, from the row's first repetition; higher "
    "is better. The shaded bands are the first and last minute the drop compares (they "
    "overlap on a run under two minutes). Pauses (--cooldown) are the gaps between points."
)


def speed_over_time(rows: Sequence[BenchRow], device: str | None) -> Plot | None:
    """Tokens/s against time for the rows of a `--duration` bench (with their
    repetitions' stamps), one line per row, the compared minutes shaded."""
    timed = [r for r in rows if r.span_s is not None and r.t_start]
    if not timed:
        return None
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(8, 4.6), layout="constrained")
    several_models = len({r.model for r in timed}) > 1
    longest = 0.0
    for i, row in enumerate(timed):
        begin = min(row.t_start)
        mids = [(a + b) / 2 - begin for a, b in zip(row.t_start, row.t_end, strict=True)]
        longest = max(longest, float(row.span_s or 0.0))
        name = f"{row.model} · " if several_models else ""
        drop = row.drop_pct
        drop_text = f", drop {drop:.1f}%" if drop is not None else ""
        threads = f"{row.threads} thread" + ("s" if row.threads != 1 else "")
        label = f"{name}{row.test} · {threads}{drop_text}"
        ax.plot(mids, row.tok_s, marker=".", linewidth=1, color=f"C{i % 10}", label=_plain(label))
    ax.axvspan(0, min(60.0, longest), color="0.85", zorder=0, label="first minute")
    ax.axvspan(
        max(0.0, longest - 60.0), longest, color="C1", alpha=0.15, zorder=0, label="last minute"
    )
    ax.set_xlabel("seconds since the row's first timed repetition")
    ax.set_ylabel("tokens/s, higher is better")
    ax.set_ylim(bottom=0)
    _legend_below(figure, ax, len(timed) + 2)
    models: dict[str, None] = {}
    for row in timed:
        quantization = row.quantization
        models[f"{row.model} ({quantization})" if quantization else str(row.model)] = None
    counts = count_range([r.repetitions for r in timed])
    line = " · ".join(
        p for p in (", ".join(models), device, f"n={counts} repetitions per row") if p
    )
    width = int(figure.get_figwidth() * _CHARS_PER_INCH)
    title = "Tokens/s over time"
    figure.suptitle(
        f"{title}\n{_plain(chr(10).join(textwrap.wrap(line, width)))}", fontsize="medium"
    )
    return Plot("speed-over-time", title, SPEED_OVER_TIME_CAPTION, _png(plt, figure))
