"""Joules over an interval: an external meter's CSV of a power that ramps, steps and
oscillates gives, for each example's timestamps, the analytic integral within 1%; the
counter and trapezoid rules on their own; uncovered intervals are None."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from edgebench.system.power import PowerSample, energy_between, read_power_log

T0 = 1_764_129_600.0  # the run's clock: unix seconds


def power(s: float) -> float:
    """The fake machine's watts s seconds into the run: a warm-up ramp, a prefill-like
    burst, a quieter stretch, then a load that swings."""
    if s < 40:
        return 1.5 + 0.1 * s
    if s < 70:
        return 7.0
    if s < 100:
        return 3.0
    return 3.0 + 1.5 * math.sin(2 * math.pi * s / 25)


def exact_joules(a: float, b: float) -> float:
    """The integral of `power` over [a, b], piece by piece in closed form."""

    def antiderivative(s: float) -> float:
        if s < 40:
            return 1.5 * s + 0.05 * s * s
        if s < 70:
            return antiderivative(40 - 1e-12) + 7.0 * (s - 40)
        if s < 100:
            return antiderivative(70 - 1e-12) + 3.0 * (s - 70)
        swing = -1.5 * 25 / (2 * math.pi)
        cos = swing * (math.cos(2 * math.pi * s / 25) - math.cos(2 * math.pi * 100 / 25))
        return antiderivative(100 - 1e-12) + 3.0 * (s - 100) + cos

    return antiderivative(b) - antiderivative(a)


# Example timestamps as a run records them, back to back (seconds into the run).
EXAMPLES = [(2.3, 9.8), (9.8, 38.1), (38.1, 55.0), (55.0, 71.7), (71.7, 98.2), (101.3, 148.6)]


@pytest.fixture
def meter_log(tmp_path: Path) -> Path:
    """A USB meter's log: a reading every 0.5 s, not aligned with the run's seconds."""
    times = [0.2 + 0.5 * k for k in range(300)]  # 0.2 .. 149.7 s
    rows = [f"{T0 + s:.3f},{power(s):.4f}" for s in times]
    path = tmp_path / "usb-meter.csv"
    path.write_text("time,watts\n" + "\n".join(rows) + "\n")
    return path


def test_energy_per_example_equals_the_integral_within_1_percent(meter_log: Path) -> None:
    samples = read_power_log(meter_log)
    for a, b in EXAMPLES:
        measured = energy_between(samples, T0 + a, T0 + b)
        exact = exact_joules(a, b)
        assert measured == pytest.approx(exact, rel=0.01), (a, b, measured, exact)
    # the examples add up to their span: no joule is counted twice or lost at a bound
    total = sum(energy_between(samples, T0 + a, T0 + b) or 0 for a, b in EXAMPLES[:5])
    assert total == pytest.approx(energy_between(samples, T0 + 2.3, T0 + 98.2), rel=1e-12)


def test_iso_timestamps_integrate_the_same(tmp_path: Path, meter_log: Path) -> None:
    from datetime import UTC, datetime

    rows = []
    for line in meter_log.read_text().splitlines()[1:]:
        t, w = line.split(",")
        rows.append(f"{datetime.fromtimestamp(float(t), UTC).isoformat()},{w}")
    iso = tmp_path / "iso.csv"
    iso.write_text("\n".join(rows))
    unix, dated = read_power_log(meter_log), read_power_log(iso)
    for a, b in EXAMPLES:
        assert energy_between(dated, T0 + a, T0 + b) == pytest.approx(
            energy_between(unix, T0 + a, T0 + b), rel=1e-9
        )


def watts(*pairs: tuple[float, float | None]) -> list[PowerSample]:
    return [PowerSample(t=t, watts=w, joules=None) for t, w in pairs]


def test_trapezoid_with_linear_interpolation_at_the_bounds() -> None:
    samples = watts((0, 2.0), (1, 4.0), (2, 4.0), (4, 0.0))
    assert energy_between(samples, 0, 4) == pytest.approx(3 + 4 + 4)
    # cut inside a reading interval: 0.5 s at 3 -> 4 W, 0.5 s at 4 W, 1 s at 4 -> 2 W
    assert energy_between(samples, 0.5, 3) == pytest.approx(1.75 + 4 + 3)
    assert energy_between(samples, 1.25, 1.75) == pytest.approx(2.0)  # inside one interval
    assert energy_between(samples, 2, 2) == 0.0


def test_gaps_are_skipped_and_order_does_not_matter() -> None:
    samples = watts((2, 4.0), (0, 2.0), (1, None), (4, 0.0))
    assert energy_between(samples, 0, 4) == pytest.approx((2 + 4) / 2 * 2 + 4)


def test_counter_interpolated_at_the_bounds() -> None:
    samples = [PowerSample(t=float(t), watts=99.0, joules=j) for t, j in enumerate((0, 10, 30, 60))]
    # the counter wins over the watts: 45 J at 2.5 s minus 5 J at 0.5 s
    assert energy_between(samples, 0.5, 2.5) == pytest.approx(40.0)
    assert energy_between(samples, 1, 3) == pytest.approx(50.0)


def test_watts_when_the_counter_does_not_cover() -> None:
    samples = [
        PowerSample(t=0.0, watts=2.0, joules=None),
        PowerSample(t=1.0, watts=2.0, joules=5.0),
        PowerSample(t=2.0, watts=2.0, joules=7.0),
    ]
    assert energy_between(samples, 0.0, 2.0) == pytest.approx(4.0)
    assert energy_between(samples, 1.0, 2.0) == pytest.approx(2.0)  # the counter


@pytest.mark.parametrize(("start", "end"), [(-0.1, 2), (1, 4.01), (3, 2), (5, 6)])
def test_not_covered_is_none(start: float, end: float) -> None:
    samples = watts((0, 2.0), (2, 2.0), (4, 2.0))
    assert energy_between(samples, start, end) is None


def test_no_samples_is_none() -> None:
    assert energy_between([], 0, 1) is None
    assert energy_between(watts((0, None), (1, None)), 0, 1) is None
