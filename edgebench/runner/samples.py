"""The sample record of one job in one arm, whatever happened to it: decoded and scored,
refused by the constraint engine (`unsupported`), too long for the context limit and not
decoded (`skipped`: complete, never scored), or lost with its worker (`crashed`,
`timeout`, `error`). Crashed and timed-out records are what `--resume` runs again."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from edgebench.backends.base import Generation, now
from edgebench.constraints import CompileReport
from edgebench.metrics.base import Family
from edgebench.metrics.score import ScoredOutput, score_output
from edgebench.runfolder.records import (
    FINISH_CRASHED,
    FINISH_ERROR,
    FINISH_SKIPPED,
    FINISH_TIMEOUT,
    FINISH_UNSUPPORTED,
    ConstraintStatus,
    FinishReason,
    ParseStep,
    PhaseTimes,
    SampleRecord,
    Timings,
    WallClock,
)
from edgebench.runner.jobs import Job
from edgebench.scoring.extract import LENIENT, Extraction
from edgebench.tasks.base import Example

# what no answer came back for: nothing to time again
_UNANSWERED = (FINISH_SKIPPED, FINISH_UNSUPPORTED, FINISH_CRASHED, FINISH_TIMEOUT, FINISH_ERROR)


def needs_retime(sample: SampleRecord) -> bool:
    """A greedy answer timed under contention and not re-timed yet (`--retime`): a draw
    at a temperature is not re-timed (its output is its seed's, not the model's only)."""
    return (
        sample.sampling is None
        and sample.passes == 1
        and sample.finish_reason not in _UNANSWERED
        and sample.contended
    )


def compute_timings(gen: Generation) -> Timings:
    """TTFT covers tokenization and prefill up to the first sampled token; decode covers
    every later forward pass. Rates are None when their interval is empty: one formula
    for every backend, from its raw timestamps."""
    latency = gen.t_end - gen.t_start
    if gen.t_first_token is None:
        return Timings(ttft_s=None, latency_s=latency, prefill_tok_s=None, decode_tok_s=None)
    ttft = gen.t_first_token - gen.t_start
    # Tokens a prefix cache served were not evaluated for this request.
    prefill = (gen.prompt_tokens - gen.cached_prompt_tokens) / ttft if ttft > 0 else None
    decode_time = gen.t_end - gen.t_first_token
    # Tokens forced before the first sampled one were evaluated with the prompt.
    decode_steps = gen.generated_tokens - gen.forced_prefix_tokens - 1
    decode = decode_steps / decode_time if decode_steps > 0 and decode_time > 0 else None
    return Timings(ttft_s=ttft, latency_s=latency, prefill_tok_s=prefill, decode_tok_s=decode)


def wall_clock(gen: Generation, received: float) -> WallClock:
    """The answer's start, first token and end on the wall clock: `received` (time.time()
    when it reached the run, within a pipe's latency of its end) and the backend's own
    durations back from it, so every backend's clock maps the same way."""
    first = None if gen.t_first_token is None else received - (gen.t_end - gen.t_first_token)
    return WallClock(start=received - (gen.t_end - gen.t_start), first_token=first, end=received)


def step_times(step_ns: dict[str, list[int]]) -> dict[str, PhaseTimes]:
    """Each decode-loop phase's calls, total, p50 and p99 (from nanoseconds per call)."""
    times: dict[str, PhaseTimes] = {}
    for phase, values in step_ns.items():
        if not values:
            continue
        array = np.asarray(values, dtype=float)
        p50, p99 = np.percentile(array, [50, 99])
        times[phase] = PhaseTimes(
            calls=len(values),
            total_ms=round(float(array.sum()) / 1e6, 3),
            p50_us=round(float(p50) / 1e3, 2),
            p99_us=round(float(p99) / 1e3, 2),
        )
    return times


SCORING_FAILED = "scoring failed: "


def score_text(
    families: Sequence[Family], text: str, example: Example, extraction: Extraction = LENIENT
) -> tuple[ScoredOutput, str | None]:
    """Every selected family's scores of `text`; a scorer that fails on some hostile
    output costs that sample (recorded with the reason), never the run. `run` and
    `edgebench score` both score through here."""
    try:
        scored = score_output(families, text, example.expected, example.schema, extraction)
        return scored, None
    except Exception as exc:  # any failure here is one sample's, not the run's
        failed = ScoredOutput(ParseStep(ok=False, path="none", error=None), None, {}, {})
        return failed, f"{SCORING_FAILED}{type(exc).__name__}: {exc}"


def build_sample(
    job: Job,
    model: str,
    constraint: str,
    gen: Generation,
    families: Sequence[Family],
    compile_report: CompileReport | None = None,
    extraction: Extraction = LENIENT,
    wall: WallClock | None = None,
) -> SampleRecord:
    example = job.example
    if gen.finish_reason == FINISH_SKIPPED:
        scored, scoring_error = None, None
    else:
        scored, scoring_error = score_text(families, gen.text, example, extraction)
    return SampleRecord(
        index=job.index,
        id=example.id,
        model=model,
        constraint=constraint,
        sampling=job.sampling,
        schema_id=example.schema_id,
        groups=example.groups,
        constraint_status=_constraint_status(constraint, compile_report),
        constraint_warnings=list(compile_report.warnings) if compile_report else [],
        constraint_guarded=list(compile_report.guarded) if compile_report else [],
        prompt=job.prompt,
        raw_output=gen.text,
        expected=example.expected,
        parse=scored.parse if scored else None,
        parsed=scored.parsed if scored else None,
        scores=scored.scores if scored else None,
        score_details=scored.details if scored else {},
        finish_reason=gen.finish_reason,
        hit_token_limit=gen.finish_reason == "length",
        max_tokens=job.max_tokens,
        prompt_tokens=gen.prompt_tokens,
        output_tokens=gen.output_tokens,
        generated_tokens=gen.generated_tokens,
        forced_tokens=gen.forced_tokens,
        forced_prefix_tokens=gen.forced_prefix_tokens,
        forward_passes=gen.forward_passes,
        guard_vetoes=gen.guard_vetoes,
        guard_dead_ends=gen.guard_dead_ends,
        timings=compute_timings(gen),
        runtime_counters=gen.runtime_counters,
        error=gen.error or scoring_error,
        answer_tokens=gen.answer_tokens,
        tokens_after_answer=_tokens_after(gen),
        closed=gen.closed,
        unclosed_output=gen.unclosed_text,
        closing_tokens=gen.closing_tokens,
        cached_prompt_tokens=gen.cached_prompt_tokens,
        compile_outcome=compile_report.outcome if compile_report else None,
        step_times=step_times(gen.step_ns),
        wall=wall,
    )


def _tokens_after(gen: Generation) -> int | None:
    """Output tokens spent after the first JSON value was complete (the closing of a
    closed answer is part of its value, not after it)."""
    if gen.answer_tokens is None:
        return None
    return max(gen.output_tokens - gen.answer_tokens, 0)


def _constraint_status(constraint: str, report: CompileReport | None) -> ConstraintStatus:
    if constraint == "none":
        return "none"
    return "applied" if report is None or report.ok else "unsupported"


def nothing_decoded(finish_reason: FinishReason, error: str) -> Generation:
    """The generation of a job that produced no output: `error` says why."""
    t = now()
    return Generation(
        text="",
        prompt_tokens=0,
        output_tokens=0,
        generated_tokens=0,
        finish_reason=finish_reason,
        t_start=t,
        t_first_token=None,
        t_end=t,
        error=error,
    )


def unsupported_generation(report: CompileReport) -> Generation:
    """A job whose constraint the engine could not compile: nothing was decoded, and the
    engine's message is the error."""
    return nothing_decoded(FINISH_UNSUPPORTED, f"unsupported by {report.mode}: {report.error}")


def skipped_generation(reason: str) -> Generation:
    """A job not decoded because its prompt and token budget do not fit the context
    limit: nothing generated, the reason kept (never truncated)."""
    return nothing_decoded(FINISH_SKIPPED, f"skipped: {reason}")
