"""Plots that carry their context, read off the matplotlib figures of a fake-backend run:
the title names models, quantization, device and n; ticks carry n per group; a measured
0 is a labelled stub; the summary's 95% intervals are whiskers; captions say how to read a
plot, never its title again; the accuracy-speed-memory overview comes first."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from html import unescape
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.container import ErrorbarContainer

from edgebench.analysis.rundata import ArmView, arms
from edgebench.report import plots
from edgebench.report.html import render_report
from edgebench.summary import LoadedRun, load_run
from edgebench.system.records import Device
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.pages import Page
from tests.helpers.run_fake import RunFake

DEVICE = {"cpu_model": "Cortex-A76", "threads_used": 4, "ram_total_mb": 8000, "hypervisor": True}
# Five examples, complexity complex (ex0, ex2, ex4) or simple (ex1, ex3): `none` gets
# everything wrong (zeros everywhere), `mask` is right four times out of five.
NONE_OUTPUTS = [WRONG] * 5
MASK_OUTPUTS = [RIGHT, RIGHT, WRONG, RIGHT, RIGHT]


def with_device(run_dir: Path, device: dict[str, Any]) -> Path:
    """The run as if measured on another machine."""
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["device"] = Device.from_json(device).to_json()
    path.write_text(json.dumps(manifest))
    return run_dir


@pytest.fixture
def run(run_fake: RunFake) -> LoadedRun:
    model = fake_model("tiny-json", details={"quantization": "Q8_0"})
    result = run_fake(
        NONE_OUTPUTS + MASK_OUTPUTS, n=5, models=[model], constraints=("none", "mask")
    )
    return load_run(with_device(result.run_dir, DEVICE))


@pytest.fixture(autouse=True)
def close_figures() -> Iterator[None]:
    yield
    plt.close("all")


@pytest.fixture
def drawn(run: LoadedRun) -> dict[str, plots.Drawn]:
    return {d.name: d for d in plots.drawn_plots(arms(run))}


def texts(figure: Any) -> list[str]:
    return [t.get_text() for ax in figure.axes for t in ax.texts]


def test_every_title_names_model_quantization_device_and_n(
    drawn: dict[str, plots.Drawn],
) -> None:
    assert set(drawn) == {
        "accuracy-speed-memory",
        "accuracy-by-complexity",
        "constraint-modes",
        "latency",
    }
    for d in drawn.values():
        title, subtitle = d.figure.get_suptitle().split("\n", 1)
        assert title == d.title
        # Wrapped to the figure's width: one line or two, the same words.
        assert " ".join(subtitle.split("\n")) == (
            "tiny-json (Q8_0) · Cortex-A76 · 4 threads · 7.8 GB RAM · VM · n=5 per arm"
        )
        assert max(len(line) for line in subtitle.split("\n")) <= 12 * d.figure.get_figwidth()


def test_the_overview_comes_first_one_labelled_point_per_arm(run: LoadedRun) -> None:
    figures = plots.drawn_plots(arms(run))
    overview = figures[0]
    assert overview.name == "accuracy-speed-memory"
    (ax,) = overview.figure.axes
    assert "decode tokens/s" in ax.get_xlabel() and "Field F1" in ax.get_ylabel()
    labels = texts(overview.figure)
    summary = run.summary
    assert len(labels) == len(summary.arms) == 2
    for label, arm in zip(labels, summary.arms, strict=True):
        rss = arm.perf.peak_rss_mb
        field_f1 = arm.metrics["field_f1"]
        assert label.startswith(f"{arm.constraint} (n=5)\nField F1 {field_f1:.2f} · peak RSS ")
        assert label.endswith(f"{rss:.0f} MiB" if rss is not None else "?")
    # The accuracy's interval as a whisker where it has width (mask's: 4 right of 5).
    assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)


def test_copies_of_one_run_are_told_apart_by_folder_and_a_crowded_overview_numbers_points(
    run: LoadedRun, tmp_path: Path
) -> None:
    """Two folders copied from one run keep its run id: the plots name them by folder.
    Four points and more would overlap their labels: numbers on the plot, text below."""
    copies = []
    for name in ("laptop", "pi"):
        shutil.copytree(run.path, tmp_path / name)
        copies.append(load_run(tmp_path / name))
    both = arms(copies[0]) + arms(copies[1])
    assert plots.arm_labels(both) == ["laptop · none", "laptop · mask", "pi · none", "pi · mask"]
    overview = plots.drawn_plots(both)[0]
    assert texts(overview.figure) == ["1", "2", "3", "4"]
    (legend,) = overview.figure.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert [e.split(":", 1)[0] for e in entries] == ["1", "2", "3", "4"]
    assert entries[3].startswith("4: pi · mask (n=5)\nField F1 ")


def bars_of(ax: Any) -> list[Any]:
    """The value bars (zero stubs apart), one per arm and tick, arm by arm."""
    return [
        p
        for c in ax.containers
        if hasattr(c, "patches")
        for p in c.patches
        if p.get_gid() != plots.ZERO_STUB_GID
    ]


def test_ticks_carry_n_per_group(drawn: dict[str, plots.Drawn]) -> None:
    figure = drawn["accuracy-by-complexity"].figure
    for ax in figure.axes:
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks == ["complex (n=3)", "simple (n=2)"]
        assert ax.get_xlabel() == "complexity"
    for name in ("constraint-modes", "latency"):
        ax = drawn[name].figure.axes[-1]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["none (n=5)", "mask (n=5)"]


def test_a_measured_zero_is_a_labelled_stub_and_no_data_is_not(
    drawn: dict[str, plots.Drawn], run: LoadedRun
) -> None:
    figure = drawn["accuracy-by-complexity"].figure
    metrics = plots.plotted_metrics(arms(run))
    none = run.summary.arm("tiny-json", "none")
    assert none is not None
    for ax, metric in zip(figure.axes, metrics, strict=True):
        zeros = [
            value
            for arm in run.summary.arms
            for value in (arm.groups["complexity"][g][metric] for g in ("complex", "simple"))
            if value == 0
        ]
        # `none` has Field F1 and JSONExact 0 in both groups (its outputs are valid JSON).
        assert len(zeros) == (0 if metric == "schema_compliance" else 2)
        stubs = [p for p in ax.patches if p.get_gid() == plots.ZERO_STUB_GID]
        assert len(stubs) == len(zeros)
        assert all(s.get_height() > 0 and s.get_visible() for s in stubs)
        assert [t for t in (x.get_text() for x in ax.texts)] == ["0.00"] * len(zeros)


def test_a_group_an_arm_never_saw_has_no_stub(run: LoadedRun) -> None:
    # Only mask has a group "rare": none's missing bar is NaN, no stub, no label.
    mine = arms(run)
    mask = mine[1]
    groups = {**mask.result.groups, "tier": {"rare": {"n": 5, "field_f1": 0.5}}}
    changed = ArmView(mask.run, _with_task_groups(mask, groups), mask.samples)
    (tier,) = [
        d for d in plots.accuracy_by_group([mine[0], changed]) if d.name == "accuracy-by-tier"
    ]
    ax = tier.figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["rare (n=5)"]
    assert not [p for p in ax.patches if p.get_gid() == plots.ZERO_STUB_GID]
    assert not ax.texts


def _with_task_groups(arm: ArmView, groups: dict[str, Any]) -> Any:
    task_name = next(k for k, f in arm.result.families.items() if f.role == "task")
    family = replace(arm.result.families[task_name], groups=groups)
    return replace(arm.result, families={**arm.result.families, task_name: family})


def test_intervals_are_whiskers(drawn: dict[str, plots.Drawn], run: LoadedRun) -> None:
    figure = drawn["accuracy-by-complexity"].figure
    mask = run.summary.arm("tiny-json", "mask")
    assert mask is not None and mask.task is not None
    interval = mask.task.groups_ci95["complexity"]["complex"]["field_f1"]
    assert interval is not None and interval[0] < interval[1]  # 2 of 3 right: a real width
    ax = figure.axes[0]  # Field F1
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert bars, "no error bars"
    spans = [
        sorted(segment[:, 1])
        for c in bars
        for collection in c.lines[2]
        for segment in collection.get_segments()
        if len(segment) == 2  # a NaN whisker (no interval) has no segment
    ]
    assert any(
        lo == pytest.approx(interval[0]) and hi == pytest.approx(interval[1]) for lo, hi in spans
    )
    modes = drawn["constraint-modes"].figure.axes[0]
    assert any(isinstance(c, ErrorbarContainer) for c in modes.containers)


def test_captions_say_how_to_read_never_the_title(
    drawn: dict[str, plots.Drawn], run: LoadedRun
) -> None:
    for d in drawn.values():
        assert d.caption and d.title not in d.caption and d.title.lower() not in d.caption.lower()
    html = render_report([run])
    captions = [unescape(c) for c in re.findall(r"<figcaption>(.*?)</figcaption>", html, re.S)]
    assert captions == [d.caption for d in drawn.values()]
    alts = [a["alt"] for tag, a in Page(html).tags if tag == "img"]
    assert alts == [d.title for d in drawn.values()]
