"""Joules over a time interval from a source's samples.

A cumulative counter (RAPL, hwmon energy) is exact between its readings: the energy is
the counter's difference, each bound interpolated linearly between the readings around
it. Power readings are integrated with the trapezoid rule over the piecewise-linear
power curve, cut at the bounds by linear interpolation. Either way the samples must
reach both bounds: an interval they do not cover has no energy (None), never a guess.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from edgebench.system.power.sample import PowerSample

Points = tuple[list[float], list[float]]  # times (ascending), values


def _points(pairs: list[tuple[float, float]]) -> Points:
    pairs.sort()
    return [t for t, _ in pairs], [v for _, v in pairs]


def _covers(times: list[float], start: float, end: float) -> bool:
    return bool(times) and times[0] <= start and end <= times[-1]


def _at(points: Points, x: float) -> float:
    """The value at x, linear between the readings around it (x within the readings)."""
    times, values = points
    i = bisect_left(times, x)
    if times[i] == x:
        return values[i]
    t0, t1 = times[i - 1], times[i]
    return values[i - 1] + (values[i] - values[i - 1]) * (x - t0) / (t1 - t0)


def _trapezoid(points: Points, start: float, end: float) -> float:
    times, values = points
    inner = slice(bisect_right(times, start), bisect_left(times, end))
    curve = [
        (start, _at(points, start)),
        *zip(times[inner], values[inner], strict=True),
        (end, _at(points, end)),
    ]
    return sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in pairwise(curve))


@dataclass(frozen=True)
class PowerCurve:
    """A source's samples as sorted counter and power points, built once so that many
    intervals (every example of a run) are each a couple of bisections."""

    counter: Points
    power: Points

    @classmethod
    def of(cls, samples: Sequence[PowerSample]) -> PowerCurve:
        return cls(
            _points([(s.t, s.joules) for s in samples if s.joules is not None]),
            _points([(s.t, s.watts) for s in samples if s.watts is not None]),
        )

    @property
    def empty(self) -> bool:
        return not self.counter[0] and not self.power[0]

    def energy(self, start: float, end: float) -> float | None:
        """Joules over [start, end]; None when the samples do not cover it."""
        if end < start:
            return None
        if _covers(self.counter[0], start, end):
            return _at(self.counter, end) - _at(self.counter, start)
        if _covers(self.power[0], start, end):
            return _trapezoid(self.power, start, end)
        return None


def energy_between(samples: Sequence[PowerSample], start: float, end: float) -> float | None:
    """Joules over [start, end]; None when the samples do not cover it."""
    return PowerCurve.of(samples).energy(start, end)
