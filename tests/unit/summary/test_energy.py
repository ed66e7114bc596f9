"""Energy per example and per arm from power readings and each example's wall-clock
timestamps: the integral of a known power over the example's own interval (within 1%),
split at the first token, idle power subtracted; None with the reason when nothing
covers it; throttling from the Pi's bits."""

from __future__ import annotations

from dataclasses import replace

import pytest

from edgebench.runfolder.read import read_manifest, read_samples
from edgebench.runfolder.records import (
    PowerReading,
    PowerRecord,
    SampleRecord,
    TimelineRow,
    WallClock,
)
from edgebench.summary import summarize
from edgebench.summary.energy import arm_throttled, example_energy, power_samples, throttled
from edgebench.system.power import PowerSample
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.power import wave, wave_integral
from tests.helpers.run_fake import RunFake

T0 = 1_800_000_000.0
RECORD = PowerRecord("fake-meter", "external", "exact", "a function", None, True, 1.0)


def rows_of(watts, start: float, end: float, step: float = 1.0, **tags) -> list[TimelineRow]:
    """Timeline rows once every `step` seconds from `start` through `end`."""
    n = round((end - start) / step)
    times = [start + i * step for i in range(n + 1)]
    return [TimelineRow(t, 50.0, [1500], None, watts(t), None, **tags) for t in times]


def with_walls(samples: list[SampleRecord], start: float, gap: float = 2.3) -> list[SampleRecord]:
    """Each sample decoded `gap` s after the last: 0.4 s of prefill, 1.1 s of decode."""
    return [
        replace(s, wall=WallClock(start + i * gap, start + i * gap + 0.4, start + i * gap + 1.5))
        for i, s in enumerate(samples)
    ]


def test_an_examples_energy_is_the_integral_of_the_power_over_its_timestamps() -> None:
    watts, joules = wave(T0), wave_integral(T0)
    power = power_samples(rows_of(watts, T0, T0 + 60), [])
    for start in (T0 + 3.25, T0 + 17.6, T0 + 41.05):
        wall = WallClock(start, start + 0.37, start + 2.9)
        energy = example_energy(wall, power, None)
        assert energy is not None
        assert energy.prefill_j == pytest.approx(joules(start, start + 0.37), rel=0.01)
        assert energy.decode_j == pytest.approx(joules(start + 0.37, start + 2.9), rel=0.01)


def test_a_cumulative_counter_gives_the_same_split() -> None:
    joules = wave_integral(T0)
    counter = [PowerSample(T0 + i, None, joules(T0, T0 + i)) for i in range(30)]
    energy = example_energy(WallClock(T0 + 5.5, T0 + 6.2, T0 + 9.8), counter, None)
    assert energy is not None
    assert energy.prefill_j == pytest.approx(joules(T0 + 5.5, T0 + 6.2), rel=0.01)
    assert energy.decode_j == pytest.approx(joules(T0 + 6.2, T0 + 9.8), rel=0.01)


def test_idle_power_is_subtracted_over_each_part_of_the_example() -> None:
    power = power_samples(rows_of(lambda t: 10.0, T0, T0 + 20), [])
    energy = example_energy(WallClock(T0 + 2, T0 + 2.5, T0 + 4), power, idle=4.0)
    assert energy is not None
    assert energy.prefill_j == pytest.approx(0.5 * (10 - 4))
    assert energy.decode_j == pytest.approx(1.5 * (10 - 4))


def test_readings_that_do_not_cover_the_example_give_no_energy() -> None:
    power = power_samples(rows_of(lambda t: 10.0, T0, T0 + 5), [])
    assert example_energy(WallClock(T0 + 4, T0 + 4.5, T0 + 6), power, None) is None


def test_the_arm_energy_in_the_summary(run_fake: RunFake) -> None:
    """Per arm: the examples' integrals, the idle baseline measured from its window
    subtracted, J per token / answer / compliant answer / exact answer."""
    result = run_fake([RIGHT, WRONG, "not json", RIGHT], n=4)
    manifest = read_manifest(result.run_dir)
    samples = with_walls(read_samples(result.run_dir)[0], T0 + 10)
    watts, joules = wave(T0), wave_integral(T0)
    timeline = rows_of(watts, T0, T0 + 30)
    record = replace(RECORD, idle_start=T0 + 1, idle_end=T0 + 6)
    summary = summarize(replace(manifest, power=record), samples, timeline)
    energy = summary.arms[0].energy
    assert energy is not None and energy.reason is None
    idle = joules(T0 + 1, T0 + 6) / 5
    assert energy.idle_watts == pytest.approx(idle, rel=0.01)
    assert energy.idle_seconds == pytest.approx(5)
    walls = [s.wall for s in samples if s.wall is not None]
    prefill = sum(joules(w.start, w.first_token) - idle * 0.4 for w in walls)
    decode = sum(joules(w.first_token, w.end) - idle * 1.1 for w in walls)
    assert energy.prefill_j == pytest.approx(prefill, rel=0.01)
    assert energy.decode_j == pytest.approx(decode, rel=0.01)
    total = prefill + decode
    assert energy.total_j == pytest.approx(total, rel=0.01)
    prompt_tokens = sum(s.prompt_tokens for s in samples)
    decode_tokens = sum(s.generated_tokens - 1 for s in samples)
    assert energy.j_per_prefill_token == pytest.approx(prefill / prompt_tokens, rel=0.01)
    assert energy.j_per_decode_token == pytest.approx(decode / decode_tokens, rel=0.01)
    assert energy.j_per_answer == pytest.approx(total / 4, rel=0.01)
    assert energy.j_per_compliant_answer == pytest.approx(total / 3, rel=0.01)  # 3 parse
    assert energy.j_per_exact_answer == pytest.approx(total / 2, rel=0.01)  # 2 right
    assert energy.n_measured == 4
    assert (energy.source, energy.tier) == ("fake-meter", "external")


def test_a_power_log_copy_takes_precedence_over_the_timeline(run_fake: RunFake) -> None:
    result = run_fake([RIGHT], n=1)
    samples = with_walls(read_samples(result.run_dir)[0], T0 + 2)
    log = [PowerReading(T0 + i * 0.5, 20.0) for i in range(20)]
    timeline = rows_of(lambda t: 1.0, T0, T0 + 10)
    summary = summarize(
        replace(read_manifest(result.run_dir), power=RECORD), samples, timeline, log
    )
    assert summary.arms[0].energy.total_j == pytest.approx(20.0 * 1.5)  # type: ignore[union-attr]


def test_no_source_gives_null_figures_with_the_reason(run_fake: RunFake) -> None:
    result = run_fake([RIGHT] * 2, n=2)  # the fixture's run has no power source
    energy = result.summary.arms[0].energy
    assert energy is not None
    assert energy.reason == "no power source in tests"
    figures = (
        energy.total_j,
        energy.j_per_answer,
        energy.j_per_prefill_token,
        energy.j_per_decode_token,
        energy.j_per_compliant_answer,
        energy.j_per_exact_answer,
        energy.idle_watts,
    )
    assert figures == (None,) * 7


def test_readings_missing_the_examples_say_so(run_fake: RunFake) -> None:
    result = run_fake([RIGHT], n=1)
    samples = with_walls(read_samples(result.run_dir)[0], T0 + 100)
    summary = summarize(
        replace(read_manifest(result.run_dir), power=RECORD), samples, rows_of(wave(T0), T0, T0 + 5)
    )
    energy = summary.arms[0].energy
    assert energy is not None and energy.total_j is None
    assert energy.reason == "no power readings cover the arm's examples"


def pi_flags(**bits: bool) -> dict[str, object]:
    names = ("freq_capped", "throttled", "soft_temp_limit", "under_voltage")
    flags = {f"{n}_{w}": False for n in names for w in ("now", "occurred")}
    return {**flags, **bits}


def row(t: float, flags: dict[str, object] | None, arm: str | None = None) -> TimelineRow:
    return TimelineRow(t, 70.0, [2400], flags, arm=arm)


def test_throttling_from_the_pi_bits() -> None:
    assert throttled([row(0, pi_flags()), row(1, pi_flags())]) is False
    assert throttled([row(0, pi_flags()), row(1, pi_flags(throttled_now=True))]) is True
    assert throttled([row(0, pi_flags()), row(1, pi_flags(freq_capped_occurred=True))]) is True
    # set before the run started: says nothing of the run
    assert throttled([row(0, pi_flags(soft_temp_limit_occurred=True))] * 2) is False
    # under-voltage alone does not hold the clock down
    assert throttled([row(0, pi_flags(under_voltage_now=True))]) is False
    assert throttled([row(0, None), row(1, None)]) is None  # no flags readable: unknown


def test_throttling_per_arm_counts_only_its_rows() -> None:
    rows = [
        row(0, pi_flags(), "m | none"),
        row(1, pi_flags(), "m | mask"),
        row(2, pi_flags(throttled_now=True), "m | mask"),
    ]
    assert arm_throttled(rows, "m | none", []) is False
    assert arm_throttled(rows, "m | mask", []) is True
    assert arm_throttled(rows, "m | json", []) is None
