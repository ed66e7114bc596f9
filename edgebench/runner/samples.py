"""The sample record: one line of `samples.jsonl` per example and arm.

Every example ends in exactly one record, whatever happened to it: decoded and scored,
refused by the constraint engine (`unsupported`), too long for the context limit and
not decoded (`skipped`: complete, never scored), or lost with its worker (`crashed`,
`timeout`, `error`). Records of the crashed and timeout kinds are what `--resume` runs
again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.backends.base import (
    FINISH_CRASHED,
    FINISH_ERROR,
    FINISH_SKIPPED,
    FINISH_TIMEOUT,
    FINISH_UNSUPPORTED,
    Generation,
    now,
)
from edgebench.constraints import CompileReport
from edgebench.metrics import Family
from edgebench.metrics.apply import score_sample
from edgebench.runner.timing import compute_timings
from edgebench.tasks.base import Example, Task

# Finish reasons of examples the worker never answered: retried by --resume.
WORKER_FAILURES = (FINISH_CRASHED, FINISH_TIMEOUT)
# The scoring fields of a sample that was never decoded because it does not fit the
# context: no parse, no scores (summaries count it apart, never as a 0).
NOT_SCORED: dict[str, Any] = {"parse": None, "parsed": None, "scores": None}


def build_sample(
    index: int,
    example: Example,
    prompt: str,
    gen: Generation,
    task: Task,
    constraint: str = "none",
    compile_report: CompileReport | None = None,
    max_tokens: int | None = None,
    families: Sequence[Family] = (),
) -> dict[str, Any]:
    if gen.finish_reason == FINISH_SKIPPED:
        scored, scoring_error = dict(NOT_SCORED), None
    else:
        scored, scoring_error = _score(task, families, gen.text, example)
    return {
        "index": index,
        "id": example.id,
        "schema_id": example.schema_id,
        "groups": example.groups,
        "constraint": constraint,
        "constraint_status": _constraint_status(constraint, compile_report),
        "constraint_warnings": list(compile_report.warnings) if compile_report else [],
        "constraint_guarded": list(compile_report.guarded) if compile_report else [],
        "prompt": prompt,
        "raw_output": gen.text,
        "expected": example.expected,
        **scored,
        "finish_reason": gen.finish_reason,
        "hit_token_limit": gen.finish_reason == "length",
        "max_tokens": max_tokens,
        "prompt_tokens": gen.prompt_tokens,
        "output_tokens": gen.output_tokens,
        "generated_tokens": gen.generated_tokens,
        "forced_tokens": gen.forced_tokens,
        "forced_prefix_tokens": gen.forced_prefix_tokens,
        "forward_passes": gen.forward_passes,
        "guard_vetoes": gen.guard_vetoes,
        "guard_dead_ends": gen.guard_dead_ends,
        "timings": compute_timings(gen).to_dict(),
        "runtime_counters": gen.runtime_counters,
        "error": gen.error or scoring_error,
    }


def _score(
    task: Task, families: Sequence[Family], text: str, example: Example
) -> tuple[dict[str, Any], str | None]:
    """The task's scores (and the extra metric families'); a scorer that fails on some
    hostile output costs that sample (recorded with the reason), never the run."""
    try:
        return score_sample(task, families, text, example), None
    except Exception as exc:  # any failure here is one sample's, not the run's
        failed = {"parse": {"ok": False, "path": "none", "error": None}, "parsed": None}
        return {**failed, "scores": {}}, f"scoring failed: {type(exc).__name__}: {exc}"


def _constraint_status(constraint: str, report: CompileReport | None) -> str:
    if constraint == "none":
        return "none"
    return "applied" if report is None or report.ok else "unsupported"


def nothing_decoded(finish_reason: str, error: str) -> Generation:
    """The record of an example that produced no output: `error` says why."""
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
    """The record for an example whose constraint the engine could not compile: nothing
    was decoded, and the engine's message is the error."""
    return nothing_decoded(FINISH_UNSUPPORTED, f"unsupported by {report.mode}: {report.error}")


def skipped_generation(reason: str) -> Generation:
    """The record for an example that was not decoded because its prompt and token budget
    do not fit the context limit: nothing generated, the reason kept (never truncated)."""
    return nothing_decoded(FINISH_SKIPPED, f"skipped: {reason}")


def backend_error_generation(error: str) -> Generation:
    return nothing_decoded(FINISH_ERROR, error)


def arm_key(model_label: str, mode: str, with_model: bool) -> str:
    """An arm's key in the manifest's `arms`: its constraint mode, or "<model> | <mode>"
    in a run of several models."""
    return f"{model_label} | {mode}" if with_model else mode


def arm_key_of(sample: dict[str, Any], with_model: bool = False) -> str:
    """The arm a record belongs to (the manifest's `arms` key)."""
    return arm_key(str(sample.get("model")), str(sample.get("constraint", "none")), with_model)


def is_worker_failure(sample: dict[str, Any]) -> bool:
    return sample.get("finish_reason") in WORKER_FAILURES


def is_skipped(sample: dict[str, Any]) -> bool:
    """Not decoded because it does not fit the context (--max-context): a complete record
    that `--resume` keeps and `edgebench score` leaves unscored."""
    return sample.get("finish_reason") == FINISH_SKIPPED
