"""The live progress line of a run: each arm shows its own running accuracy and decode
speed (never averaged with earlier models and modes), and, while later arms follow, an ETA
for the whole run. Read from what the progress bar leaves on a (non-terminal) console: the
last frame of every arm. A terminal gone with its session (SIGHUP) does not stop the run
from recording that it was interrupted."""

from __future__ import annotations

import io
import itertools

from rich.console import Console

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.progress import RichProgress
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import Worker
from tests.helpers.fakes import fake_model
from tests.helpers.faults import echo_examples
from tests.helpers.run_fake import RunFake

WRONG_ANSWER = '{"nothing": "of", "the": "kind"}'  # several tokens: a decode speed


def _worker(model: ModelUnderTest, mode: str) -> Worker:
    """`good` answers two examples of three right (see `echo_examples`) at 100 tok/s;
    `poor` answers wrong at 25 tok/s (one word = one token, on the fake's virtual clock)."""
    if model.label == "good":
        backend = FakeBackend(echo=True, timings=FakeTimings(per_output_token=0.01))
    else:
        timings = FakeTimings(per_output_token=0.04)
        backend = FakeBackend(default_output=WRONG_ANSWER, timings=timings)
    return InProcessWorker(backend)


def _arm_lines(run_fake: RunFake, width: int = 300, lines_per_arm: int = 1) -> list[str]:
    """Two models, two modes, three examples each; the last frame of each arm's bar, with
    a clock that moves 10 s at every reading (each frame's lines joined by a space)."""
    out = io.StringIO()
    ticks = itertools.count(0.0, 10.0)
    progress = RichProgress(Console(file=out, width=width), clock=lambda: next(ticks))
    run_fake(
        examples=echo_examples(3),
        models=[fake_model("good"), fake_model("poor")],
        constraints=("none", "json"),
        factory=_worker,
        progress=progress,
    )
    lines = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    assert len(lines) == 4 * lines_per_arm, lines
    assert "…" not in out.getvalue() and max(len(line) for line in lines) <= width, lines
    return [
        " ".join(lines[start : start + lines_per_arm])
        for start in range(0, len(lines), lines_per_arm)
    ]


def test_each_arm_shows_its_own_accuracy_and_speed(run_fake: RunFake) -> None:
    lines = _arm_lines(run_fake)
    arms = itertools.product(("good", "poor"), ("none", "json"))
    for line, (model, mode) in zip(lines, arms, strict=True):
        assert f"{model}, {mode}" in line
    assert all("exact 0.67 · 100 tok/s" in line for line in lines[:2]), lines
    # The second model's own figures, not a mean with the first model's (0.33, 62 tok/s).
    assert all("exact 0.00 · 25 tok/s" in line for line in lines[2:]), lines


def test_the_run_eta_covers_the_arms_still_to_come(run_fake: RunFake) -> None:
    lines = _arm_lines(run_fake)
    # 10 s an example so far; after each arm, 9, 6 and 3 examples are left in the run.
    assert lines[0].endswith("· run ETA 0:01:30"), lines[0]
    assert lines[1].endswith("· run ETA 0:01:00"), lines[1]
    assert lines[2].endswith("· run ETA 0:00:30"), lines[2]
    assert "run ETA" not in lines[3]  # the last arm: its own ETA says it all


def test_at_80_columns_each_arm_takes_two_whole_lines(run_fake: RunFake) -> None:
    """The name, count and bar on one line, the figures and ETAs on the next: nothing
    cut to "…" (once the count and ETA collapsed to "2…")."""
    frames = _arm_lines(run_fake, width=80, lines_per_arm=2)
    arms = itertools.product(("good", "poor"), ("none", "json"))
    for frame, (model, mode) in zip(frames, arms, strict=True):
        assert f"{model}, {mode} 3/3" in frame, frame
        assert "ETA 0:00:00" in frame, frame
    assert all("exact 0.67 · 100 tok/s" in frame for frame in frames[:2]), frames
    assert frames[0].endswith("· run ETA 0:01:30"), frames[0]


class GoneTerminal(io.StringIO):
    """A terminal whose session dropped (SIGHUP): every write fails with EIO."""

    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")


def test_stopping_on_a_terminal_that_is_gone_does_not_raise() -> None:
    progress = RichProgress(Console(file=GoneTerminal(), width=100))
    progress.start(3, "echo · a, none", 3)
    progress.stop()  # the run goes on to mark itself interrupted and release its lock


def test_the_fidelity_phase_shows_its_running_kl_and_top1() -> None:
    out = io.StringIO()
    progress = RichProgress(Console(file=out, width=200), clock=lambda: 0.0)
    progress.start(2, "fidelity · m vs m@Q8_0", 2)
    progress.step("KL 0.1733 · top-1 [0.500]")  # markup-like text shows as it is
    progress.step("KL 0.1733 · top-1 [0.000]")
    progress.stop()
    last = [line for line in out.getvalue().splitlines() if line.strip()][-1]
    assert "fidelity · m vs m@Q8_0" in last and "2/2" in last
    assert "KL 0.1733 · top-1 [0.000]" in last
