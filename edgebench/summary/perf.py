"""Speed, memory, compile and guard figures of one arm, from its records."""

from __future__ import annotations

from collections import Counter

import numpy as np

from edgebench.runfolder.records import (
    FINISH_CRASHED,
    FINISH_JSON_COMPLETE,
    FINISH_LOOP,
    FINISH_SKIPPED,
    FINISH_TIMEOUT,
    FINISH_UNSUPPORTED,
    ArmRecord,
    CompileRecord,
    CompileSummary,
    Distribution,
    GuardSummary,
    Perf,
    PhaseSummary,
    PhaseTimes,
    SampleRecord,
    Timings,
)
from edgebench.summary.uncertainty import median_ci

# Examples nothing was decoded for: no speed figures to take from them.
_UNTIMED = (FINISH_UNSUPPORTED, FINISH_CRASHED, FINISH_TIMEOUT, FINISH_SKIPPED)
# The speed figures whose p50 has an interval (Perf.p50_ci95), as Timings names them.
SPEED_FIGURES = ("ttft_s", "latency_s", "prefill_tok_s", "decode_tok_s")


def timed(samples: list[SampleRecord]) -> list[SampleRecord]:
    """The samples something was decoded for: the ones speed is measured on."""
    return [s for s in samples if s.finish_reason not in _UNTIMED]


def figure_of(timings: Timings, figure: str) -> float | None:
    value = getattr(timings, figure)
    return float(value) if value is not None else None


def distribution(values: list[float]) -> Distribution:
    """p50, p95 (linear interpolation) and mean; None when there is nothing to measure."""
    if not values:
        return Distribution(None, None, None, 0)
    array = np.asarray(values, dtype=float)
    return Distribution(
        float(np.percentile(array, 50)),
        float(np.percentile(array, 95)),
        float(array.mean()),
        len(values),
    )


def perf_summary(samples: list[SampleRecord], arm: ArmRecord) -> Perf:
    """Speed, memory and token totals of one arm (its own worker)."""
    answered = timed(samples)
    timings = [s.timings for s in answered]
    contended = sum(1 for s in answered if s.contended)
    # a worker whose memory was never read (samples 0, source none) has no peak, not 0 MB
    memory = arm.memory if arm.memory and arm.memory.samples else None
    finish = Counter(s.finish_reason for s in samples)

    def measured(figure: str) -> list[float]:
        return [v for t in timings if (v := figure_of(t, figure)) is not None]

    return Perf(
        load_s=arm.load_s,
        peak_rss_mb=memory.peak_rss_mb if memory else None,
        peak_rss_anon_mb=memory.peak_rss_anon_mb if memory else None,
        peak_rss_file_mb=memory.peak_rss_file_mb if memory else None,
        ttft_s=distribution(measured("ttft_s")),
        latency_s=distribution(measured("latency_s")),
        prefill_tok_s=distribution(measured("prefill_tok_s")),
        decode_tok_s=distribution(measured("decode_tok_s")),
        prompt_tokens_total=sum(s.prompt_tokens for s in samples),
        output_tokens_total=sum(s.output_tokens for s in samples),
        generated_tokens_total=sum(s.generated_tokens for s in samples),
        forced_tokens_total=sum(s.forced_tokens for s in samples),
        finish_reasons=dict(finish),
        hit_token_limit=finish.get("length", 0),
        wall_s=arm.wall_s,
        loops=finish.get(FINISH_LOOP, 0),
        stopped_at_json=finish.get(FINISH_JSON_COMPLETE, 0),
        tokens_after_answer_total=sum(s.tokens_after_answer or 0 for s in samples),
        closed=sum(s.closed for s in samples),
        closing_tokens_total=sum(s.closing_tokens for s in samples),
        ttft_warm=any(s.cached_prompt_tokens for s in samples),
        cached_prompt_tokens_total=sum(s.cached_prompt_tokens for s in samples),
        step_times=step_summary(samples),
        contended_examples=contended,
        speed_clean=speed_clean(answered, contended),
        p50_ci95={figure: median_ci(measured(figure)) for figure in SPEED_FIGURES},
    )


def speed_clean(answered: list[SampleRecord], contended: int) -> bool | None:
    """True when every timed example's CPU was measured and none is left contended; None
    when that is unknown (a run before format 2.9 measured nothing, or nothing was timed)."""
    if not answered or not all(s.cpu for s in answered):
        return None
    return contended == 0


def step_summary(samples: list[SampleRecord]) -> dict[str, PhaseSummary]:
    """Each decode-loop phase over the arm: calls, mean per call (all calls pooled), and
    the median answer's p50 and p99 (answers keep their percentiles, not every call)."""
    phases: dict[str, list[PhaseTimes]] = {}
    for sample in samples:
        for phase, times in sample.step_times.items():
            phases.setdefault(phase, []).append(times)
    summary: dict[str, PhaseSummary] = {}
    for phase, answers in phases.items():
        calls = sum(t.calls for t in answers)
        summary[phase] = PhaseSummary(
            calls=calls,
            mean_us=round(sum(t.total_ms for t in answers) * 1e3 / calls, 2),
            p50_us=round(float(np.median([t.p50_us for t in answers])), 2),
            p99_us=round(float(np.median([t.p99_us for t in answers])), 2),
            samples=len(answers),
        )
    return summary


# The runtime counter of an engine that compiles the grammar again inside every answer.
PER_ANSWER_COMPILE = "grammar_compile_ms"


def compile_summary(records: list[CompileRecord], samples: list[SampleRecord]) -> CompileSummary:
    """Grammar compile times per distinct schema: the first compile and the cached one;
    and each answer's own compile (its samples' counter) where the engine does it again."""
    failed = [r for r in records if not r.ok]
    per_answer = [
        s.runtime_counters[PER_ANSWER_COMPILE] / 1000
        for s in timed(samples)
        if PER_ANSWER_COMPILE in s.runtime_counters
    ]
    return CompileSummary(
        schemas=len(records),
        unsupported=len(failed),
        first_s=distribution([r.seconds for r in records]),
        cached_s=distribution([r.cached_seconds for r in records if r.cached_seconds is not None]),
        first_total_s=sum(r.seconds for r in records),
        sources=dict(Counter(r.source for r in records)),
        errors={r.label: r.error for r in failed},
        schemas_with_unenforced_keywords=sum(1 for r in records if r.warnings),
        per_answer_s=distribution(per_answer) if per_answer else None,
    )


def guard_summary(samples: list[SampleRecord]) -> GuardSummary:
    """What the keyword guard did: samples whose schema it guarded, candidate tokens it
    struck out, and times every allowed token was refused (the engine's best taken)."""
    return GuardSummary(
        samples_guarded=sum(1 for s in samples if s.constraint_guarded),
        vetoes=sum(s.guard_vetoes for s in samples),
        dead_ends=sum(s.guard_dead_ends for s in samples),
    )
