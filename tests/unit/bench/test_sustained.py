"""Sustained runs without waiting: `bench --duration` (repeats until the time is up, each
repetition stamped), the first minute against the last on hand-made series, `--cooldown`
between repetitions and outside every timing, and `--wait-cool` with a fake thermometer
(cools, never cools, unreadable). The clock moves only when told to or when something
sleeps (tests/helpers/waits.py)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from edgebench.bench.execute import BenchInterrupted, BenchSettings, execute_bench
from edgebench.bench.sustained import sustained_figures
from edgebench.runfolder.records import BenchRecord
from edgebench.runner.cooling import wait_until_cool
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.bench_fakes import TimedWorker, bench_model
from tests.helpers.waits import START, FakeTime


# -- first minute against the last ---------------------------------------------------
def series(speeds: list[float], seconds_each: float = 10.0) -> tuple[list[float], ...]:
    """Back-to-back repetitions of `seconds_each`, at these speeds."""
    starts = [START + i * seconds_each for i in range(len(speeds))]
    return starts, [s + seconds_each for s in starts], speeds


def test_a_drop_from_100_to_80_is_20_percent() -> None:
    # 10 minutes: six 10 s repetitions at 100 tok/s, the rest at 80
    figures = sustained_figures(*series([100.0] * 6 + [80.0] * 54))
    assert figures["first_minute_tok_s"] == pytest.approx(100.0)
    assert figures["last_minute_tok_s"] == pytest.approx(80.0)
    assert figures["drop_pct"] == pytest.approx(20.0)
    assert figures["span_s"] == pytest.approx(600.0)
    assert figures["overlap_s"] == 0.0


def test_a_repetition_counts_in_the_minute_of_its_midpoint() -> None:
    # 25 s repetitions: midpoints 12.5, 37.5, 62.5 ... the third is not in the first minute
    figures = sustained_figures(*series([90.0, 90.0, 60.0, 60.0, 60.0, 30.0], 25.0))
    assert figures["first_minute_tok_s"] == pytest.approx(90.0)
    # span 150 s: the last minute holds midpoints >= 90 (112.5, 137.5)
    assert figures["last_minute_tok_s"] == pytest.approx(45.0)
    assert figures["drop_pct"] == pytest.approx(50.0)


def test_a_speed_up_is_a_negative_drop() -> None:
    figures = sustained_figures(*series([80.0] * 6 + [100.0] * 6))
    assert figures["drop_pct"] == pytest.approx(-25.0)


def test_under_two_minutes_the_minutes_overlap_and_say_by_how_much() -> None:
    # 90 s: the first minute [0, 60] and the last [30, 90] share 30 s
    figures = sustained_figures(*series([100.0, 100.0, 100.0, 90.0, 90.0, 90.0, 80.0, 80.0, 80.0]))
    assert figures["span_s"] == pytest.approx(90.0)
    assert figures["overlap_s"] == pytest.approx(30.0)
    assert figures["first_minute_tok_s"] == pytest.approx((300 + 270) / 6)
    assert figures["last_minute_tok_s"] == pytest.approx((270 + 240) / 6)
    assert figures["drop_pct"] == pytest.approx(100 * (95 - 85) / 95)


def test_under_one_minute_there_is_one_window_and_no_drop() -> None:
    figures = sustained_figures(*series([100.0, 50.0], 20.0))
    assert figures["span_s"] == pytest.approx(40.0)
    assert figures["overlap_s"] == pytest.approx(40.0)
    assert figures["first_minute_tok_s"] == figures["last_minute_tok_s"] == pytest.approx(75.0)
    assert figures["drop_pct"] is None


def test_no_repetitions_no_figures() -> None:
    assert sustained_figures([], [], []) == {}


# -- bench --duration and --cooldown -----------------------------------------------------
def timed_bench(
    tmp_path: Path, time: FakeTime, speed: Callable[[float], float], **settings: Any
) -> tuple[dict[str, Any], list[TimedWorker]]:
    workers: list[TimedWorker] = []

    def factory(model: ModelUnderTest, threads: int) -> TimedWorker:
        workers.append(TimedWorker(time, speed))
        return workers[-1]

    out = tmp_path / "bench.json"
    chosen = {"threads": (1,), "prompt_tokens": (0,), "gen_tokens": (100,), "out": out}
    result = execute_bench(
        BenchSettings(**{**chosen, **settings}),
        [bench_model()],
        worker_factory=factory,
        root=tmp_path,
        waits=time.waits(),
    )
    return result.report, workers


def test_duration_repeats_until_the_time_is_up_and_reports_the_drop(tmp_path: Path) -> None:
    """tg100 at 100 tok/s for the first minute, 80 after: 1 s, then 1.25 s repetitions
    until 10 minutes have passed."""
    time = FakeTime()
    report, _ = timed_bench(
        tmp_path, time, lambda t: 100.0 if t < 60 else 80.0, duration_s=600.0, warmup=1
    )
    (row,) = report["results"]
    assert row["t_start"][0] == pytest.approx(START + 1.0)  # after the warm-up
    span = row["t_end"][-1] - row["t_start"][0]
    assert 600.0 <= span < 600.0 + 1.25  # the round that crossed 10 minutes finished
    assert row["repetitions"] == len(row["tok_s"]) == len(row["t_start"]) == len(row["t_end"])
    assert row["repetitions"] == 60 + 432  # 60 one-second, then 1.25 s ones to 600 s
    assert row["first_minute_tok_s"] == pytest.approx(100.0)
    assert row["last_minute_tok_s"] == pytest.approx(80.0)
    assert row["drop_pct"] == pytest.approx(20.0)
    assert row["overlap_s"] == 0.0
    assert report["settings"]["duration_s"] == 600.0
    assert "repeated for 600 s of wall time" in report["settings"]["order"]
    BenchRecord.from_json(report)  # the file is a valid record


def test_duration_keeps_every_row_at_the_same_count(tmp_path: Path) -> None:
    """Rounds run whole: the pp and tg rows end with as many repetitions each."""
    time = FakeTime()
    report, _ = timed_bench(
        tmp_path, time, lambda t: 50.0, duration_s=30.0, prompt_tokens=(100,), warmup=0
    )
    counts = {r["test"]: r["repetitions"] for r in report["results"]}
    assert counts == {"pp100": 8, "tg100": 8}  # 2 s + 2 s rounds: 8 rounds reach 32 s


def test_duration_runs_at_least_one_round(tmp_path: Path) -> None:
    time = FakeTime()
    report, _ = timed_bench(tmp_path, time, lambda t: 1.0, duration_s=1.0, warmup=0)
    (row,) = report["results"]
    assert row["repetitions"] == 1
    # one repetition longer than a minute: both minutes hold it, one window, no drop
    assert row["drop_pct"] is None and row["span_s"] == pytest.approx(100.0)


def test_without_duration_rows_have_timestamps_but_no_sustained_figures(tmp_path: Path) -> None:
    time = FakeTime()
    report, _ = timed_bench(tmp_path, time, lambda t: 100.0, repetitions=3, warmup=0)
    (row,) = report["results"]
    assert row["t_start"] == pytest.approx([START, START + 1, START + 2])
    assert "first_minute_tok_s" not in row and "drop_pct" not in row


def test_cooldown_pauses_between_repetitions_outside_their_timings(tmp_path: Path) -> None:
    time = FakeTime()
    report, _ = timed_bench(
        tmp_path,
        time,
        lambda t: 100.0,
        repetitions=3,
        warmup=1,
        prompt_tokens=(100,),
        cooldown_s=30.0,
    )
    # 2 rows x 3 repetitions: a pause before each timed one but the first, none before
    # the warm-ups
    assert time.sleeps == [30.0] * 5
    rows = {r["test"]: r for r in report["results"]}
    assert rows["pp100"]["seconds"] == pytest.approx([1.0] * 3)  # the pause is not in them
    assert rows["tg100"]["tok_s"] == pytest.approx([100.0] * 3)
    starts = sorted(rows["pp100"]["t_start"] + rows["tg100"]["t_start"])
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps == pytest.approx([31.0] * 5)  # 1 s repetition + 30 s pause
    assert "30 s pause before each timed repetition" in report["settings"]["order"]


def test_cooldown_counts_in_the_duration(tmp_path: Path) -> None:
    """--duration is wall time: with 9 s pauses after 1 s repetitions, 60 s hold six."""
    time = FakeTime()
    report, _ = timed_bench(
        tmp_path, time, lambda t: 100.0, duration_s=60.0, cooldown_s=9.0, warmup=0
    )
    (row,) = report["results"]
    assert row["repetitions"] == 7  # starts at 0, 10 ... 60: the round at 60 s is the last
    assert row["seconds"] == pytest.approx([1.0] * 7)


def test_ctrl_c_in_a_cooldown_keeps_what_was_measured(tmp_path: Path) -> None:
    def press(done: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    time = FakeTime(on_sleep=press)
    out = tmp_path / "bench.json"
    with pytest.raises(BenchInterrupted):
        timed_bench(tmp_path, time, lambda t: 100.0, repetitions=5, warmup=0, cooldown_s=5.0)
    report = json.loads(out.read_text())
    assert report["status"] == "interrupted"
    (row,) = report["results"]
    assert row["repetitions"] == 3


# -- --wait-cool -----------------------------------------------------------------------
def test_wait_cool_waits_until_the_cpu_is_below_the_target() -> None:
    time = FakeTime(temperatures=(72.0, 66.5, 58.0, 49.5, 47.0))
    lines: list[str] = []
    waited = wait_until_cool(50.0, 600.0, time.waits(), lines.append, poll_s=5.0)
    assert waited.outcome == "cooled"
    assert waited.start_c == 72.0 and waited.end_c == 49.5
    assert waited.waited_s == pytest.approx(15.0) and time.sleeps == [5.0] * 3
    assert waited.sensor == "thermal_zone0 (x86_pkg_temp)"
    assert lines[0] == (
        "waiting for the CPU to cool below 50 °C: 72.0 °C (thermal_zone0 (x86_pkg_temp)), "
        "0 of at most 600 s"
    )
    assert len(lines) == 4 and "66.5 °C" in lines[1] and "58.0 °C" in lines[2]
    assert lines[-1] == "CPU cooled to 49.5 °C (below 50 °C) in 15 s"
    assert waited.message == lines[-1]


def test_wait_cool_starts_at_once_when_already_cool() -> None:
    time = FakeTime(temperatures=(41.0,))
    lines: list[str] = []
    waited = wait_until_cool(50.0, 600.0, time.waits(), lines.append)
    assert waited.outcome == "already" and waited.waited_s == 0 and time.sleeps == []
    assert lines == ["CPU at 41.0 °C, below 50 °C: starting"]


def test_wait_cool_gives_up_at_the_timeout_and_starts_anyway() -> None:
    time = FakeTime(temperatures=(80.0, 79.0, 78.5))
    lines: list[str] = []
    waited = wait_until_cool(50.0, 12.0, time.waits(), lines.append, poll_s=5.0)
    assert waited.outcome == "timeout"
    assert time.sleeps == [5.0, 5.0, 2.0]  # never past the timeout
    assert waited.waited_s == pytest.approx(12.0) and waited.end_c == 78.5
    assert lines[-1] == (
        "--wait-cool 50: the CPU is still at 78.5 °C after 12 s (--wait-cool-timeout 12); "
        "starting anyway"
    )


def test_wait_cool_without_a_thermometer_says_so_and_starts() -> None:
    time = FakeTime(temperatures=(None,))
    lines: list[str] = []
    waited = wait_until_cool(50.0, 600.0, time.waits(), lines.append)
    assert waited.outcome == "unreadable" and time.sleeps == []
    assert waited.start_c is None and waited.sensor is None
    assert lines == [
        "--wait-cool 50: no CPU temperature is readable here (no CPU thermal zone or hwmon "
        "sensor); starting without waiting"
    ]


def test_a_reading_lost_while_waiting_is_shown_as_such() -> None:
    time = FakeTime(temperatures=(70.0, None, 45.0))
    lines: list[str] = []
    waited = wait_until_cool(50.0, 600.0, time.waits(), lines.append, poll_s=1.0)
    assert waited.outcome == "cooled" and "unreadable" in lines[1]


def test_bench_waits_before_loading_and_records_it(tmp_path: Path) -> None:
    time = FakeTime(temperatures=(60.0, 55.0, 45.0))
    notes: list[str] = []
    out = tmp_path / "bench.json"

    def factory(model: ModelUnderTest, threads: int) -> TimedWorker:
        notes.append("load")  # the worker starts after the wait
        return TimedWorker(time, lambda t: 100.0)

    execute_bench(
        BenchSettings(threads=(1,), prompt_tokens=(0,), gen_tokens=(10,), out=out, wait_cool=50),
        [bench_model()],
        worker_factory=factory,
        root=tmp_path,
        waits=time.waits(),
        notify=notes.append,
    )
    assert notes[-2].startswith("CPU cooled to 45.0 °C") and notes[-1] == "load"
    record = BenchRecord.from_json(json.loads(out.read_text()))
    assert record.wait_cool is not None
    assert record.wait_cool.outcome == "cooled" and record.wait_cool.waited_s == 10.0
    assert record.settings["wait_cool"] == 50


def test_bench_records_an_unreadable_temperature(tmp_path: Path) -> None:
    time = FakeTime(temperatures=(None,))
    report, _ = timed_bench(tmp_path, time, lambda t: 100.0, repetitions=1, wait_cool=45.0)
    assert report["wait_cool"]["outcome"] == "unreadable"
    assert report["status"] == "completed" and report["results"]
