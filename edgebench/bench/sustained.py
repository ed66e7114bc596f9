"""`edgebench bench --duration`: the first minute of a row against its last.

A row's repetitions each have a start and an end on the wall clock. The row's span runs
from its first start to its last end; a repetition belongs to a minute when its midpoint
falls in it (a repetition is never split). Each minute's speed is the mean tokens/s of
its repetitions, as the row's own mean is; the drop is (first - last) / first in %,
positive when the row slowed down.

Under two minutes the first and last minute overlap (the record says by how much: a 90 s
run's share 30 s) and the figures are reported as they are; when both minutes hold the
same repetitions (a span under one minute, or a single repetition longer than one) there
is one window only: both speeds are its mean and there is no drop (None).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

MINUTE_S = 60.0


def sustained_figures(
    t_start: Sequence[float], t_end: Sequence[float], tok_s: Sequence[float]
) -> dict[str, Any]:
    """The first-minute and last-minute speed of one row, their drop, the row's span and
    how much the two minutes overlap (BenchRow's fields of those names)."""
    if not tok_s or len(t_start) != len(tok_s) or len(t_end) != len(tok_s):
        return {}
    begin, end = min(t_start), max(t_end)
    span = end - begin
    mids = [(a + b) / 2 for a, b in zip(t_start, t_end, strict=True)]
    first = [i for i, m in enumerate(mids) if m <= begin + MINUTE_S]
    last = [i for i, m in enumerate(mids) if m >= end - MINUTE_S]
    first_speed = statistics.fmean(tok_s[i] for i in first) if first else None
    last_speed = statistics.fmean(tok_s[i] for i in last) if last else None
    drop = None
    if first != last and first_speed and last_speed is not None:  # two windows to compare
        drop = 100 * (first_speed - last_speed) / first_speed
    return {
        "first_minute_tok_s": first_speed,
        "last_minute_tok_s": last_speed,
        "drop_pct": drop,
        "span_s": span,
        "overlap_s": max(0.0, min(2 * MINUTE_S - span, span)),
    }
