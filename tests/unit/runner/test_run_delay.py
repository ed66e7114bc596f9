"""`edgebench run --delay` and `--wait-cool` in this process, with a fake clock that moves
only when something sleeps (tests/helpers/waits.py): a pause before each decoded example
but an arm's first, outside every timing; Ctrl-C in a pause ends the run with its
examples kept and `--resume` continues it; the run ETA counts the pauses; the wait for a
cool CPU is recorded per session."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from edgebench.backends.fake import FakeBackend
from edgebench.cli.progress import RichProgress
from edgebench.report.facts import run_rows
from edgebench.runfolder.read import read_manifest, read_samples
from edgebench.runner.engine import RunInterrupted
from edgebench.summary import load_run
from tests.helpers.fakes import example
from tests.helpers.faults import echo_examples
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import sample_content
from tests.helpers.waits import FakeTime

N = 4


def echo_run(run_fake: RunFake, out: Path, **kw: Any) -> Any:
    return run_fake(FakeBackend(echo=True), examples=echo_examples(N), out=out, **kw)


class Notes:
    """A progress display that keeps only the notes."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def start(self, total: int, description: str, run_left: int) -> None: ...
    def advance(self, sample: Any) -> None: ...
    def stop(self) -> None: ...

    def note(self, message: str) -> None:
        self.notes.append(message)


def test_delay_pauses_between_examples_outside_every_timing(
    run_fake: RunFake, tmp_path: Path
) -> None:
    plain = echo_run(run_fake, tmp_path / "plain", constraints=("none", "json"))
    time = FakeTime()
    paused = echo_run(
        run_fake,
        tmp_path / "paused",
        constraints=("none", "json"),
        delay=30.0,
        waits=time.waits(),
    )
    assert time.sleeps == [30.0] * (2 * (N - 1))  # not before an arm's first example
    assert sample_content(tmp_path / "paused") == sample_content(tmp_path / "plain")
    manifest = read_manifest(paused.run_dir)
    assert manifest.settings.delay == 30.0
    for arm in manifest.arms:
        assert arm.paused_s == pytest.approx(30.0 * (N - 1))
        assert arm.wall_s < 1.0  # the fake clock moved only in the pauses: none counted
    # every example's timings come from its own timestamps: the same as without pauses
    for a, b in zip(plain.summary.arms, paused.summary.arms, strict=True):
        assert a.perf.decode_tok_s == b.perf.decode_tok_s
        assert a.perf.latency_s == b.perf.latency_s


def test_no_pause_before_a_skipped_example(run_fake: RunFake, tmp_path: Path) -> None:
    """Too long for the context: not decoded, so nothing to cool down from."""
    time = FakeTime()
    texts = ["short one", "long " * 300, "short two", "short three"]
    result = run_fake(
        FakeBackend(echo=True),
        examples=[example(i, text=t) for i, t in enumerate(texts)],
        out=tmp_path / "run",
        delay=5.0,
        waits=time.waits(),
        max_context=256,
    )
    samples, _ = read_samples(result.run_dir)
    assert [s.finish_reason == "skipped" for s in samples] == [False, True, False, False]
    assert time.sleeps == [5.0, 5.0]  # before the third and fourth: the second is skipped


def test_ctrl_c_in_a_pause_keeps_the_examples_and_resume_finishes(
    run_fake: RunFake, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    echo_run(run_fake, reference)

    def press(done: int) -> None:
        if done == 1:  # the second pause: two examples are recorded
            raise KeyboardInterrupt

    out = tmp_path / "run"
    time = FakeTime(on_sleep=press)
    with pytest.raises(RunInterrupted) as stopped:
        echo_run(run_fake, out, delay=10.0, waits=time.waits())
    assert stopped.value.n_samples == 2 and stopped.value.resume is not None
    manifest = read_manifest(out)
    assert manifest.status == "interrupted"
    assert manifest.arms[0].status == "interrupted"
    assert manifest.arms[0].paused_s == pytest.approx(10.0)  # the pause that completed
    # --resume, with another delay (it does not change what is measured)
    again = FakeTime()
    echo_run(run_fake, out, delay=2.0, resume=True, waits=again.waits())
    assert sample_content(out) == sample_content(reference)
    assert again.sleeps == [2.0]  # N - 2 examples left: one pause between them
    # the manifest keeps the first session's settings, as for --timeout; the pauses add up
    assert read_manifest(out).arms[0].paused_s == pytest.approx(12.0)


def test_the_run_eta_counts_the_pauses(run_fake: RunFake) -> None:
    """One model, two modes of N examples, 30 s pauses and nothing else taking time:
    after the first arm 3 pauses in 4 examples, 22.5 s each, 4 examples left."""
    time = FakeTime()
    out = io.StringIO()
    progress = RichProgress(Console(file=out, width=300), clock=time.clock, pause_s=30.0)
    run_fake(
        FakeBackend(echo=True),
        examples=echo_examples(N),
        constraints=("none", "json"),
        delay=30.0,
        waits=time.waits(),
        progress=progress,
    )
    first_arm = next(line for line in out.getvalue().splitlines() if line.strip())
    assert first_arm.rstrip().endswith("· run ETA 0:01:30"), first_arm
    assert progress.speed_window == 150.0  # rich's pace is taken over five pauses


def test_wait_cool_before_the_first_example_is_recorded(run_fake: RunFake, tmp_path: Path) -> None:
    time = FakeTime(temperatures=(64.0, 52.0, 44.0))
    notes = Notes()
    result = echo_run(
        run_fake, tmp_path / "run", wait_cool=50.0, waits=time.waits(), progress=notes
    )
    (waited,) = read_manifest(result.run_dir).wait_cool
    assert waited.outcome == "cooled" and waited.start_c == 64.0 and waited.end_c == 44.0
    assert waited.waited_s == 10.0 and waited.target_c == 50.0 and waited.timeout_s == 600.0
    assert notes.notes[-1] == "CPU cooled to 44.0 °C (below 50 °C) in 10 s"
    assert "waiting for the CPU to cool below 50 °C: 64.0 °C" in notes.notes[0]


def test_wait_cool_without_a_thermometer_starts_and_says_so(
    run_fake: RunFake, tmp_path: Path
) -> None:
    time = FakeTime(temperatures=(None,))
    notes = Notes()
    result = echo_run(
        run_fake, tmp_path / "run", wait_cool=50.0, waits=time.waits(), progress=notes
    )
    (waited,) = read_manifest(result.run_dir).wait_cool
    assert waited.outcome == "unreadable" and time.sleeps == []
    assert notes.notes == [waited.message] and "starting without waiting" in waited.message
    assert result.summary.arms[0].n_examples == N


def test_each_session_waits_again(run_fake: RunFake, tmp_path: Path) -> None:
    out = tmp_path / "run"

    def press(done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):  # Ctrl-C while waiting: nothing decoded yet
        echo_run(
            run_fake,
            out,
            wait_cool=50.0,
            waits=FakeTime(temperatures=(70.0,), on_sleep=press).waits(),
        )
    assert read_manifest(out).status == "interrupted"
    echo_run(
        run_fake, out, wait_cool=50.0, resume=True, waits=FakeTime(temperatures=(40.0,)).waits()
    )
    manifest = read_manifest(out)
    assert [w.outcome for w in manifest.wait_cool] == ["already"]
    assert manifest.status == "completed"


def test_the_wait_is_among_the_run_facts_of_cards_and_reports(
    run_fake: RunFake, tmp_path: Path
) -> None:
    time = FakeTime(temperatures=(None,))
    result = echo_run(run_fake, tmp_path / "run", wait_cool=50.0, waits=time.waits())
    rows = dict(run_rows(load_run(result.run_dir)))
    assert rows["wait-cool"].startswith("--wait-cool 50: no CPU temperature is readable")
