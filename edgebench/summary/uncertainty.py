"""95% bootstrap intervals: of an arm's rates over its examples, and of the difference
between two arms on the same examples (paired).

Pure and deterministic: a fixed seed and resample count (recorded in summary.json as
`bootstrap`), numpy only. An interval is the 2.5th and 97.5th percentiles (inverted empirical
CDF, no interpolation) of the figure over `RESAMPLES` resamples of the examples
drawn with replacement. A paired difference resamples example ids and takes both arms'
scores of the same examples, so it keeps what the two arms share. Speed figures are
medians: `median_ci` takes the p50 of each resample (linear interpolation, as the
figure itself), `paired_median_ratio` the ratio of two arms' p50s over the same
resampled examples. docs/metrics.md defines them; n < `INDICATIVE_N` makes any of them
indicative only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
METHOD = "percentile bootstrap over examples (paired over example ids for differences)"
INDICATIVE_N = 50  # below this many examples a figure is indicative only

Interval = list[float]  # [lo, hi]


def _indices(n: int, resamples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _percentiles(values: np.ndarray, level: float) -> Interval:
    tail = (1 - level) / 2 * 100
    # the smallest resampled value whose empirical CDF reaches the level: a value some
    # resample took, with no interpolation between them
    lo, hi = np.percentile(values, [tail, 100 - tail], method="inverted_cdf")
    return [float(lo), float(hi)]


def bootstrap_ci(
    numerators: Sequence[float],
    denominators: Sequence[float] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """Interval of sum(numerators) / sum(denominators) over resampled examples (the mean
    when `denominators` is None). None with no example: no value, no interval. A resample
    whose denominators sum to 0 has no value and is left out."""
    num = np.asarray(numerators, dtype=float)
    if num.size == 0:
        return None
    idx = _indices(num.size, resamples, seed)
    if denominators is None:
        return _percentiles(num[idx].mean(axis=1), level)
    den = np.asarray(denominators, dtype=float)[idx].sum(axis=1)
    kept = den > 0
    if not kept.any():
        return None
    return _percentiles(num[idx].sum(axis=1)[kept] / den[kept], level)


def _paired(base: Sequence[float], other: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Two arms' values on the same examples (position i of both is one example)."""
    if len(base) != len(other):
        raise ValueError("paired values must cover the same examples")
    return np.asarray(base, dtype=float), np.asarray(other, dtype=float)


def paired_difference(
    base: Sequence[float],
    other: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, Interval] | None:
    """mean(other) - mean(base) over the same examples (position i of both is one
    example) and its paired interval: each resample draws example positions once and
    takes both arms' scores there. None with no example."""
    a, b = _paired(base, other)
    diff = b - a
    if diff.size == 0:
        return None
    interval = bootstrap_ci(diff, resamples=resamples, seed=seed, level=level)
    assert interval is not None
    return float(diff.mean()), interval


def median_ci(
    values: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """Interval of the median (p50, linearly interpolated like the figure itself) of
    `values`, one per example, over resampled examples. None with no example."""
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return None
    idx = _indices(array.size, resamples, seed)
    return _percentiles(np.percentile(array[idx], 50, axis=1), level)


def paired_median_ratio(
    base: Sequence[float],
    other: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval | None:
    """Interval of p50(other) / p50(base) over the same examples (position i of both is
    one example): each resample draws example positions once and takes both arms' values
    there, so what the examples share (their length, their schema) cancels. A resample
    whose base p50 is 0 has no ratio and is left out; None with no example."""
    a, b = _paired(base, other)
    if a.size == 0:
        return None
    idx = _indices(a.size, resamples, seed)
    den = np.percentile(a[idx], 50, axis=1)
    num = np.percentile(b[idx], 50, axis=1)
    kept = den > 0
    if not kept.any():
        return None
    return _percentiles(num[kept] / den[kept], level)
