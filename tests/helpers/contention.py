"""A loaded run whose arms' contention is set by hand: the summary fields the
orchestrator's CPU measurement fills (`perf.contended_examples`, `perf.speed_clean`), so
cards and recommendations can be tested on clean, contended and unmeasured runs."""

from __future__ import annotations

from dataclasses import replace

from edgebench.summary import LoadedRun


def with_contention(
    run: LoadedRun, speed_clean: bool | None, contended: dict[str, int] | None = None
) -> LoadedRun:
    """`run` with every arm's speed clean (True), contended (False: `contended` gives the
    examples per constraint mode, default all timed ones) or unmeasured (None)."""
    counts = contended or {}
    arms = [
        replace(
            arm,
            perf=replace(
                arm.perf,
                speed_clean=speed_clean,
                contended_examples=(
                    0
                    if speed_clean is not False
                    else counts.get(arm.constraint, arm.perf.latency_s.n)
                ),
            ),
        )
        for arm in run.summary.arms
    ]
    return replace(run, summary=replace(run.summary, arms=arms))
