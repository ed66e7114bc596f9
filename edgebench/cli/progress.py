"""The live progress bars of the terminal: a run's (one arm at a time, with its running
score, speed and ETAs) and a bench's (one bar per thread count). A terminal concern, so
they live with the commands that print them, not with the report's views."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column, Table

from edgebench.metrics import FAMILIES
from edgebench.report.fit import natural_width
from edgebench.runfolder.records import SampleRecord

# The score the progress bar shows, by the name a task's scores have it under, with its
# short header, as its family declares it; else the task's first score (round trip: CSA).
_HEADLINE = {
    info.progress: dict((key, header) for header, key in info.headline)[info.progress]
    for info in FAMILIES.values()
    if info.progress
}


class RichProgress:
    """Progress bar of one arm at a time, with that arm's own running accuracy and speed,
    its ETA and, when later arms follow, an ETA for the whole run.

    Both ETAs go at the pace measured on the wall clock, so `--delay` pauses between
    examples (`pause_s`) count in them; the arm's pace is taken over at least five
    examples with their pauses (rich's default, 30 s, may hold a single one)."""

    def __init__(
        self,
        console: Console,
        clock: Callable[[], float] = time.monotonic,
        pause_s: float = 0.0,
    ) -> None:
        self.console = console
        self.clock = clock
        self.speed_window = max(30.0, 5 * pause_s)
        self._progress: Progress | None = None
        self._task_id: Any = None
        self._label = "exact"
        self._arm = _ArmFigures()
        # Over the whole run: when the first arm started, jobs done since, jobs left.
        self._t_run: float | None = None
        self._run_done = 0
        self._run_left = 0
        self._arm_left = 0

    def start(self, total: int, description: str, run_left: int) -> None:
        """A new arm of `total` jobs; `run_left` jobs are left in the run, this arm's
        included. Figures start afresh: an arm never shows an earlier arm's."""
        self._arm = _ArmFigures()
        self._run_left = run_left
        self._arm_left = total
        if self._t_run is None:
            self._t_run = self.clock()
        self._progress = _FittedProgress(
            TextColumn("[bold]{task.description}", table_column=Column(overflow="fold")),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[run_eta]}"),
            console=self.console,
            transient=False,
            speed_estimate_period=self.speed_window,
        )
        self._progress.start()
        self._task_id = self._progress.add_task(
            escape(description), total=total, stats="", run_eta=""
        )

    def advance(self, sample: SampleRecord) -> None:
        if sample.scores is not None:  # None: skipped (too long for the context), not scored
            scores = next(iter(sample.scores.values()), {})  # the task's family comes first
            key = next((k for k in _HEADLINE if k in scores), next(iter(scores), None))
            if key is not None:
                self._label = _HEADLINE.get(key, key)
            self._arm.score(None if key is None else float(scores[key]))
        self._arm.rate(sample.timings.decode_tok_s)
        self._run_done += 1
        self._run_left -= 1
        self._arm_left -= 1
        assert self._progress is not None
        self._progress.update(
            self._task_id, advance=1, stats=self._arm.text(self._label), run_eta=self._run_eta()
        )

    def step(self, stats: str) -> None:
        """One example of the fidelity phase, with its running figures."""
        self._run_done += 1
        self._run_left -= 1
        self._arm_left -= 1
        assert self._progress is not None
        self._progress.update(
            self._task_id, advance=1, stats=escape(stats), run_eta=self._run_eta()
        )

    def _run_eta(self) -> str:
        """The whole run's time left, at the pace of the run so far (loading included);
        nothing while only this arm is left."""
        if self._t_run is None or self._run_left <= self._arm_left or not self._run_done:
            return ""
        pace = (self.clock() - self._t_run) / self._run_done
        return f"· run ETA {_clock(pace * self._run_left)}"

    def note(self, message: str) -> None:
        """A line above the bar: a worker that crashed, an example that timed out."""
        self.console.print(f"[yellow]{escape(message)}[/]", highlight=False, soft_wrap=True)

    def stop(self) -> None:
        if self._progress is None:
            return
        with contextlib.suppress(OSError):  # a terminal gone with SIGHUP takes no last frame
            self._progress.stop()


class _FittedProgress(Progress):
    """One line per arm when it fits the console; else two: the arm's name, count and a
    bar filling what is left, then its figures and ETAs. At 80 columns rich would cut the
    count and ETA to "2…" and the arm's name mid-word."""

    # The wide line's columns: name, bar, count, then the figures and ETAs.
    NAME, BAR, COUNT = 0, 1, 2

    def _table(self, columns: Sequence[ProgressColumn], expand: bool = False) -> Table:
        grid = Table.grid(
            *(c.get_table_column().copy() for c in columns), padding=(0, 1), expand=expand
        )
        for task in self.tasks:
            if task.visible:
                grid.add_row(*(column(task) for column in columns))
        return grid

    def get_renderables(self) -> Iterable[RenderableType]:
        columns = [c for c in self.columns if isinstance(c, ProgressColumn)]
        line = self._table(columns)
        live = getattr(self, "live", None)  # None while Progress is being made: no task yet
        if live is None or natural_width(live.console, line) <= live.console.width:
            yield line
            return
        bar = BarColumn(bar_width=None, table_column=Column(ratio=1))
        yield self._table([columns[self.NAME], columns[self.COUNT], bar], expand=True)
        yield self._table(columns[self.COUNT + 1 :])


class _ArmFigures:
    """One arm's running headline score (mean over scored examples) and decode speed."""

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.rates: list[float] = []

    def score(self, value: float | None) -> None:
        self.n += 1
        self.total += value or 0.0

    def rate(self, decode_tok_s: float | None) -> None:
        if decode_tok_s:
            self.rates.append(decode_tok_s)

    def text(self, label: str) -> str:
        stats = f"{label} {self.total / self.n:.2f}" if self.n else ""
        if self.rates:
            stats += f" · {sum(self.rates) / len(self.rates):.0f} tok/s"
        return stats


def _clock(seconds: float) -> str:
    """H:MM:SS, as rich's own ETA column shows it."""
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class BenchRichProgress:
    """One bar per thread count: which test and repetition runs, and its speed so far."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._progress: Progress | None = None
        self._task: Any = None

    def start(self, total: int | None, description: str) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[label]}"),
            TimeElapsedColumn(),
            console=self.console,
        )
        self._progress.start()
        self._task = self._progress.add_task(description, total=total, label="")

    def advance(self, label: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, advance=1, label=label)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
