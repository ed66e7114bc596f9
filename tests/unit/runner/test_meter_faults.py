"""A power meter cannot end a run (issue "a flaky meter ends the run"): a `--power-command`
that prints garbage, bytes that are not UTF-8, nothing, hangs, forks, or a source that
raises, costs readings, each lost with its reason in its timeline row; the sampler keeps
going, the run completes with its summary, and each arm's energy says what was lost."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.runfolder.read import read_manifest, read_rows
from edgebench.runfolder.records import TimelineRow
from edgebench.runner.engine import RunResult
from edgebench.runner.timeline import Timeline
from edgebench.system.power import PowerSample, choose_power_source
from edgebench.system.power.command import CommandSource
from edgebench.system.power.sample import ReadingLost
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

HEAT = {"temp_c": 48.5, "temp_source": "fake", "freq_mhz": [1500], "throttled": None}


def meter(tmp_path: Path, good: int, bad: str, *, every: int = 0) -> str:
    """A meter script: its first `good` calls print watts, the later ones run `bad`
    (shell); with `every`, only every `every`-th later call is bad."""
    calls = tmp_path / "calls"
    calls.write_text("0")
    test = f'[ "$n" -gt {good} ]'
    if every:
        test += f" && [ $((n % {every})) -eq 0 ]"
    path = tmp_path / "meter.sh"
    path.write_text(
        "#!/bin/sh\n"
        f"n=$(($(cat {calls}) + 1)); echo $n > {calls}\n"
        f"if {test}; then {bad}; else echo 5.0 W; fi\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("printf '5.\\377\\n'", "printed bytes that are not UTF-8 text"),
        ("echo 'ERR#@!'", "printed no number of watts"),
        ("echo nan; echo inf", "printed no number of watts"),
        ("echo 1e999", "printed watts that are not a number >= 0"),
        ("echo -2", "printed watts that are not a number >= 0"),
        ("exit 9", "failed (exit 9)"),
        ("sleep 30", "did not finish within 0.5 s"),
        ("sleep 30 & echo 5", "did not finish within 0.5 s"),
        ("head -c 10000000 /dev/urandom", "printed bytes that are not UTF-8 text"),
        ("echo 1e308", "printed watts over 1e+06 W"),
        ("kill -9 $$", "ended by signal 9"),
        ("exec >&- 2>&-; sleep 30", "did not finish within 0.5 s"),
        ("echo 5 >&2; exec >&-; sleep 30", "did not finish within 0.5 s"),
        ("yes 5 | tr -d '\\n'", "did not finish within 0.5 s"),
    ],
    ids=lambda value: value[:40],
)
def test_every_kind_of_bad_poll_is_a_reading_lost_with_its_reason(
    tmp_path: Path, bad: str, reason: str
) -> None:
    source = CommandSource(meter(tmp_path, 1, bad), timeout=0.5)
    assert source.read().watts == 5.0
    with pytest.raises(ReadingLost) as lost:
        source.read()
    assert lost.value.reason == reason


class Raising:
    """A source that raises what no source should: the sampler must not care."""

    name, tier, resolution, covers = "broken", "external", "-", "-"

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    def read(self) -> PowerSample | None:
        self.calls += 1
        if self.calls % 2:
            raise self.error
        return PowerSample(float(self.calls), 4.0, None)


@pytest.mark.parametrize(
    "error",
    [
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
        ValueError("could not convert"),
        RuntimeError("driver"),
        ReadingLost("the meter's serial line dropped"),
    ],
)
def test_the_sampler_thread_outlives_any_source_error(tmp_path: Path, error: BaseException) -> None:
    source = Raising(error)
    stop_after = threading.Event()
    waits = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        return len(waits) >= 6 or stop_after.is_set()

    def heat() -> dict:
        if len(waits) == 2:
            raise OSError("thermal zone gone")
        return HEAT

    timeline = Timeline(tmp_path, source, heat=heat, wait=wait)  # type: ignore[arg-type]
    timeline.open(resumed=False)
    timeline.start()
    assert timeline._thread is not None
    timeline._thread.join(5)
    timeline.stop()
    rows = read_rows(tmp_path, "timeline.jsonl", TimelineRow)
    assert len(rows) == 7 and timeline.error is None
    raised = f"the source raised {type(error).__name__}"
    expected = str(error) if isinstance(error, ReadingLost) else raised
    assert [r.lost for r in rows] == [expected, None] * 3 + [expected]
    assert [r.watts for r in rows[1:6:2]] == [4.0, 4.0, 4.0]
    assert rows[2].temp_c is None and rows[3].temp_c == 48.5


def metered_run(run_fake: RunFake, command: str, n: int) -> RunResult:
    """A run of `n` examples of the fake model (0.15 s each) polling `command` every 50 ms."""
    timings = FakeTimings(per_prompt_token=0.0005, per_output_token=0.002)
    return run_fake(
        FakeBackend([RIGHT] * n, timings=timings, delay_s=0.15),
        n=n,
        power=choose_power_source(command=command),
        power_command=command,
        timeline_interval=0.05,
        idle_baseline=0.0,
    )


def test_a_meter_that_prints_garbage_after_two_readings_costs_the_energy_not_the_run(
    run_fake: RunFake, tmp_path: Path
) -> None:
    command = meter(tmp_path, 2, "printf '\\377\\376 W\\n'")
    result = metered_run(run_fake, command, 3)
    manifest = read_manifest(result.run_dir)
    assert manifest.status == "completed"
    assert (result.run_dir / "summary.json").is_file()
    energy = result.summary.arms[0].energy
    assert energy is not None
    assert energy.readings_lost > 0
    assert energy.lost_reasons == {"printed bytes that are not UTF-8 text": energy.readings_lost}
    assert energy.partial == (
        f"{energy.readings_lost} power readings lost while the arm decoded: "
        f"printed bytes that are not UTF-8 text ({energy.readings_lost})"
    )
    # no reading covers the examples: no figure, and why
    assert energy.total_j is None
    assert energy.reason == "no power readings cover the arm's examples"


def test_readings_lost_now_and_then_leave_partial_figures(
    run_fake: RunFake, tmp_path: Path
) -> None:
    command = meter(tmp_path, 1, "echo 'E: checksum'", every=3)
    result = metered_run(run_fake, command, 4)
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.total_j is not None and energy.n_measured >= 1
    assert energy.readings_lost > 0
    assert set(energy.lost_reasons) == {"printed no number of watts"}
    assert energy.partial is not None and energy.partial.startswith(
        f"{energy.readings_lost} power reading"
    )
    rows = read_rows(result.run_dir, "timeline.jsonl", TimelineRow)
    lost = [r for r in rows if r.lost is not None]
    assert lost and all(r.watts is None for r in lost)


def test_a_meter_that_fails_from_the_start_is_one_line_before_the_run(tmp_path: Path) -> None:
    command = meter(tmp_path, 0, "printf '\\377\\n'")
    with pytest.raises(Exception) as caught:
        choose_power_source(command=command)
    assert str(caught.value) == (
        f"--power-command {command!r} printed bytes that are not UTF-8 text"
    )


def test_compare_says_the_energy_is_partial_and_why(run_fake: RunFake, tmp_path: Path) -> None:
    from edgebench.analysis.rundata import load_run
    from edgebench.report.compare import compare_table

    command = meter(tmp_path, 1, "echo 'E: checksum'", every=2)
    result = metered_run(run_fake, command, 3)
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.total_j is not None
    caption = str(compare_table([load_run(result.run_dir).summary]).caption)
    lost = energy.readings_lost
    assert f"partial: {lost} readings lost (printed no number of watts ({lost}))" in caption


def test_the_terminal_hears_how_many_readings_were_lost_and_why() -> None:
    from collections import Counter

    from edgebench.runner.timeline import lost_note

    assert lost_note(Counter()) is None
    lost = Counter({"printed no number of watts": 3, "did not finish within 5 s": 1})
    assert lost_note(lost) == (
        "power: 4 readings lost, the energy is partial: printed no number of watts (3); "
        "did not finish within 5 s (1)"
    )


class Absurd:
    """A source (a PMIC line, an INA reader, a counter) whose every other reading is a
    number no energy can be summed from."""

    name, tier, resolution, covers = "absurd", "external", "-", "-"

    def __init__(self, bad: PowerSample) -> None:
        self.bad = bad
        self.calls = 0

    def read(self) -> PowerSample | None:
        self.calls += 1
        return self.bad if self.calls % 2 else PowerSample(float(self.calls), 4.0, None)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (PowerSample(1.0, float("inf"), None), "gave watts that are not a number"),
        (PowerSample(1.0, float("nan"), None), "gave watts that are not a number"),
        (PowerSample(1.0, -3.5, None), "gave negative watts"),
        (PowerSample(1.0, 1e308, None), "gave watts over 1e+06 W"),
        (PowerSample(1.0, None, float("inf")), "gave an energy that is not a number"),
        (PowerSample(float("nan"), 4.0, None), "gave a time that is not a number"),
    ],
    ids=["inf watts", "nan watts", "negative watts", "1e308 watts", "inf joules", "nan time"],
)
def test_a_reading_no_energy_can_be_summed_from_is_lost_with_its_reason(
    tmp_path: Path, bad: PowerSample, reason: str
) -> None:
    waits: list[float] = []

    def wait(seconds: float) -> bool:
        waits.append(seconds)
        return len(waits) >= 4

    timeline = Timeline(tmp_path, Absurd(bad), heat=lambda: HEAT, wait=wait)  # type: ignore[arg-type]
    timeline.open(resumed=False)
    timeline.start()
    assert timeline._thread is not None
    timeline._thread.join(5)
    timeline.stop()
    rows = read_rows(tmp_path, "timeline.jsonl", TimelineRow)
    assert [r.lost for r in rows] == [reason, None] * 2 + [reason]
    assert [r.watts for r in rows] == [None, 4.0, None, 4.0, None]
    assert timeline.lost == {reason: 3} and timeline.error is None
