"""timeline.jsonl: a row once a second on the sampler's clock (a fake clock here, no
sleeping), each tagged with the arm and example decoding; a whole run with a fake power
source gets rows around every example and its energy equal to the integral of that
power; `--resume` appends to the earlier rows."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.runfolder.read import read_manifest, read_rows, read_samples
from edgebench.runfolder.records import PowerReading, TimelineRow
from edgebench.runner.timeline import Timeline
from edgebench.system.power import PowerChoice
from tests.helpers.fakes import RIGHT
from tests.helpers.power import FakePower, wave, wave_integral
from tests.helpers.run_fake import RunFake

HEAT = {"temp_c": 48.5, "temp_source": "fake", "freq_mhz": [1500, 2400], "throttled": None}


class FakeClock:
    """A clock that moves only when the sampler waits (or a read takes `cost` s)."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.t

    def wait_for(self, rows: int):  # type: ignore[no-untyped-def]
        def wait(seconds: float) -> bool:
            self.waits.append(seconds)
            self.t += seconds
            return len(self.waits) >= rows  # True: stopped

        return wait


def test_rows_once_a_second_on_a_fixed_schedule(tmp_path: Path) -> None:
    clock = FakeClock()

    def slow_heat() -> dict[str, object]:  # a read that takes 0.3 s must not drift
        clock.t += 0.3
        return HEAT

    power = FakePower(lambda t: 5.0, clock=clock)
    timeline = Timeline(tmp_path, power, clock=clock, heat=slow_heat, wait=clock.wait_for(5))
    timeline.open(resumed=False)
    timeline.at("m | none", "ex3")
    timeline.loop()
    rows = read_rows(tmp_path, "timeline.jsonl", TimelineRow)
    assert [round(r.t - 1000.0, 6) for r in rows] == [0.3, 1.3, 2.3, 3.3, 4.3]
    assert clock.waits == pytest.approx([0.7] * 5)
    first = rows[0]
    assert (first.temp_c, first.freq_mhz, first.watts, first.joules) == (
        48.5,
        [1500, 2400],
        5.0,
        None,
    )
    assert (first.arm, first.example) == ("m | none", "ex3")


def test_stop_ends_with_a_last_row_and_no_source_leaves_power_null(tmp_path: Path) -> None:
    clock = FakeClock()
    timeline = Timeline(tmp_path, None, clock=clock, heat=lambda: HEAT, wait=clock.wait_for(2))
    timeline.open(resumed=False)
    timeline.loop()
    timeline.stop()
    rows = read_rows(tmp_path, "timeline.jsonl", TimelineRow)
    assert len(rows) == 3
    assert all(r.watts is None and r.joules is None for r in rows)


def test_a_resumed_timeline_keeps_its_complete_rows_and_drops_a_torn_one(tmp_path: Path) -> None:
    clock = FakeClock()
    first = Timeline(tmp_path, None, clock=clock, heat=lambda: HEAT, wait=clock.wait_for(3))
    first.open(resumed=False)
    first.loop()
    first._log.close()  # type: ignore[union-attr]  # a killed run: no stop()
    with (tmp_path / "timeline.jsonl").open("a") as handle:
        handle.write('{"t": 12')  # torn by the crash
    again = Timeline(tmp_path, None, clock=clock, heat=lambda: HEAT, wait=clock.wait_for(5))
    again.open(resumed=True)
    again.loop()
    times = [r.t for r in read_rows(tmp_path, "timeline.jsonl", TimelineRow)]
    assert len(times) == 3 + 2 and times == sorted(times)


def fast_backend(outputs: list[str]) -> FakeBackend:
    """Answers of a few milliseconds of virtual time, 50 ms of real time each."""
    timings = FakeTimings(per_prompt_token=0.0005, per_output_token=0.002)
    return FakeBackend(outputs, timings=timings, delay_s=0.05)


def test_a_run_with_a_power_source_reports_the_integral_of_its_power(
    run_fake: RunFake,
) -> None:
    """The fake meter draws a known wave; every example's energy (start, first token,
    end on the wall clock) is the wave's integral over it, within 1%, idle subtracted."""
    t0 = time.time()
    meter = FakePower(wave(t0, base=6.0, swing=3.0, period=2.0))
    joules = wave_integral(t0, base=6.0, swing=3.0, period=2.0)
    result = run_fake(
        fast_backend([RIGHT] * 6),
        n=6,
        power=meter.choice(),
        timeline_interval=0.02,
        idle_baseline=0.2,
    )
    run_dir = result.run_dir
    manifest = read_manifest(run_dir)
    power = manifest.power
    assert power is not None and power.source == "fake-meter" and power.reason is None
    assert power.idle_start is not None and power.idle_end is not None
    idle = joules(power.idle_start, power.idle_end) / (power.idle_end - power.idle_start)
    samples = read_samples(run_dir)[0]
    expected = 0.0
    for sample in samples:
        wall = sample.wall
        assert wall is not None and wall.first_token is not None
        assert wall.start < wall.first_token < wall.end
        expected += joules(wall.start, wall.end) - idle * (wall.end - wall.start)
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.reason is None
    assert energy.idle_watts == pytest.approx(idle, rel=0.01)
    assert energy.n_measured == 6
    assert energy.total_j == pytest.approx(expected, rel=0.01)
    rows = read_rows(run_dir, "timeline.jsonl", TimelineRow)
    decoding = [r for r in rows if r.arm == "fake-model | none"]
    assert decoding and {r.example for r in decoding} <= {s.id for s in samples}
    assert rows[0].t <= power.idle_start and rows[-1].t >= samples[-1].wall.end  # type: ignore[union-attr]


def test_no_timeline_measures_without_sampling(run_fake: RunFake) -> None:
    meter = FakePower(lambda t: 5.0)
    result = run_fake([RIGHT] * 2, n=2, power=meter.choice(), timeline=False, idle_baseline=0.0)
    assert not (result.run_dir / "timeline.jsonl").exists()
    assert meter.reads == []
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.total_j is None
    assert energy.reason == "--no-timeline: the power source was not sampled"
    assert result.summary.arms[0].throttled_during_run is None


def test_resume_appends_to_the_timeline_and_keeps_the_idle_window(
    run_fake: RunFake, tmp_path: Path
) -> None:
    meter = FakePower(lambda t: 7.0)
    choice = meter.choice()
    with pytest.raises(KeyboardInterrupt):
        run_fake(
            _interrupting(FakeBackend(echo=True, delay_s=0.03)),
            n=4,
            power=choice,
            timeline_interval=0.02,
            idle_baseline=0.1,
        )
    run_dir = tmp_path / "run"
    before = read_rows(run_dir, "timeline.jsonl", TimelineRow)
    window = read_manifest(run_dir).power
    result = run_fake(
        FakeBackend(echo=True, delay_s=0.03),
        n=4,
        power=choice,
        timeline_interval=0.02,
        resume=True,
        idle_baseline=0.1,
    )
    after = read_rows(run_dir, "timeline.jsonl", TimelineRow)
    assert after[: len(before)] == before and len(after) > len(before)
    power = read_manifest(run_dir).power
    assert power is not None and window is not None
    assert (power.idle_start, power.idle_end) == (window.idle_start, window.idle_end)
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.n_measured == 4
    assert energy.j_per_answer is not None and energy.j_per_answer == pytest.approx(0.0, abs=1e-6)


def _interrupting(backend: FakeBackend) -> FakeBackend:
    """The backend, raising Ctrl-C on the third answer."""
    real = backend.generate
    calls = []

    def generate(prompt, settings):  # type: ignore[no-untyped-def]
        calls.append(prompt)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(prompt, settings)

    backend.generate = generate  # type: ignore[method-assign]
    return backend


def test_timeline_rows_are_json_lines(run_fake: RunFake) -> None:
    result = run_fake([RIGHT], n=1, power=FakePower(lambda t: 3.0).choice(), idle_baseline=0.0)
    lines = (result.run_dir / "timeline.jsonl").read_text().splitlines()
    keys = {"t", "temp_c", "freq_mhz", "throttled", "watts", "joules", "arm", "example"}
    keys |= {"others_share", "steal_share", "lost"}
    assert lines and all(set(json.loads(line)) == keys for line in lines)


def test_a_power_log_is_copied_into_the_folder_and_integrated(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """--power-log: the meter's CSV (written before and during the run) is read when the
    run ends; its rows around the examples land in power-log.jsonl and give the energy."""
    t0 = time.time()
    log = tmp_path / "meter.csv"
    rows = [f"{t0 - 5 + 0.5 * i:.3f},{4.0 + 0.1 * i:.3f}" for i in range(200)]
    log.write_text("time,watts\n" + "\n".join(rows) + "\n")
    late = "\n".join(f"{t0 + 500 + i},9" for i in range(3))  # far after the run: left out
    log.write_text(log.read_text() + late + "\n")
    result = run_fake(
        fast_backend([RIGHT] * 3),
        n=3,
        power=PowerChoice(None, log, None),
        power_log=log,
        idle_baseline=0.2,
    )
    copied = read_rows(result.run_dir, "power-log.jsonl", PowerReading)
    assert copied and all(r.t < t0 + 100 for r in copied)
    energy = result.summary.arms[0].energy
    assert energy is not None and energy.reason is None
    assert (energy.source, energy.tier) == ("log", "external")
    samples = read_samples(result.run_dir)[0]

    def joules(a: float, b: float) -> float:  # the log's watts: 4.0 + 0.2 W/s from t0 - 5
        def w(t: float) -> float:
            return 4.0 + 0.2 * (t - (t0 - 5))

        return (b - a) * (w(a) + w(b)) / 2

    power = read_manifest(result.run_dir).power
    assert power is not None and power.idle_start is not None and power.idle_end is not None
    idle = joules(power.idle_start, power.idle_end) / (power.idle_end - power.idle_start)
    expected = sum(
        joules(s.wall.start, s.wall.end) - idle * (s.wall.end - s.wall.start)
        for s in samples
        if s.wall is not None
    )
    assert energy.total_j == pytest.approx(expected, rel=0.01)


def test_pi_throttle_bits_in_the_timeline_flag_the_arm(run_fake: RunFake) -> None:
    capped = {**HEAT, "throttled": {"freq_capped_now": True, "throttled_now": False}}
    result = run_fake([RIGHT] * 2, n=2, heat=lambda: dict(capped))
    assert result.summary.arms[0].throttled_during_run is True
    assert result.summary.throttled_during_run is True
    calm = {**HEAT, "throttled": {"freq_capped_now": False, "freq_capped_occurred": False}}
    result = run_fake([RIGHT] * 2, n=2, heat=lambda: dict(calm), out=result.run_dir.parent / "calm")
    assert result.summary.arms[0].throttled_during_run is False


def test_a_full_disk_stops_the_sampler_with_a_note_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import edgebench.io as io_module

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    clock = FakeClock()
    timeline = Timeline(tmp_path, None, clock=clock, heat=lambda: HEAT, wait=clock.wait_for(50))
    timeline.open(resumed=False)
    monkeypatch.setattr(io_module.os, "fsync", full)
    timeline.loop()  # the tenth row's fsync fails: the loop ends there
    assert timeline.rows == 9
    timeline.stop()
    assert timeline.error == "timeline.jsonl: No space left on device"


def test_each_row_has_the_cpu_shares_since_the_previous_row(tmp_path: Path) -> None:
    from edgebench.system.cpu_share import CpuMeter
    from tests.helpers.cpu_times import CLEAN, CONTENDED, STOLEN, FakeCpuTimes

    # read k advances the fake machine by script[k // 2]: each row shows the advance of its
    # own read (the first row has no previous one)
    meter = CpuMeter(source=FakeCpuTimes([CONTENDED, STOLEN, CLEAN]))
    clock = FakeClock()
    timeline = Timeline(
        tmp_path, None, clock=clock, heat=lambda: HEAT, wait=clock.wait_for(3), cpu=meter
    )
    timeline.open(resumed=False)
    timeline.loop()
    timeline.stop()
    rows = read_rows(tmp_path, "timeline.jsonl", TimelineRow)
    shares = [(r.others_share, r.steal_share) for r in rows]
    assert shares == [(None, None), CONTENDED, STOLEN, STOLEN]
