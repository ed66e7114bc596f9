"""Timings of one answer from the backend's raw timestamps (one formula for every
backend), and the sample record built around them."""

from __future__ import annotations

from typing import Any

import pytest

from edgebench.backends.base import Generation
from edgebench.metrics import select_families
from edgebench.runner.jobs import Job
from edgebench.runner.samples import build_sample, compute_timings, nothing_decoded
from tests.helpers.fakes import RIGHT, example


def gen(**kw: Any) -> Generation:
    base: dict[str, Any] = dict(
        text="",
        prompt_tokens=100,
        output_tokens=10,
        generated_tokens=11,
        finish_reason="stop",
        t_start=10.0,
        t_first_token=10.5,
        t_end=11.5,
    )
    base.update(kw)
    return Generation(**base)


def test_timings_from_timestamps() -> None:
    t = compute_timings(gen())
    assert t.ttft_s == pytest.approx(0.5)
    assert t.prefill_tok_s == pytest.approx(200.0)
    assert t.decode_tok_s == pytest.approx(10.0)  # 10 forward passes after the first token
    assert t.latency_s == pytest.approx(1.5)


def test_timings_without_tokens_have_no_rates() -> None:
    t = compute_timings(gen(t_first_token=None, generated_tokens=0, output_tokens=0))
    assert t.ttft_s is None and t.decode_tok_s is None and t.prefill_tok_s is None
    assert t.latency_s == pytest.approx(1.5)
    one = compute_timings(gen(generated_tokens=1, output_tokens=0, t_end=10.5))
    assert one.decode_tok_s is None and one.ttft_s == pytest.approx(0.5)


def test_tokens_forced_before_the_first_sample_are_not_decode_tokens() -> None:
    forced = gen(
        text="x",
        prompt_tokens=10,
        output_tokens=13,
        generated_tokens=13,
        t_start=0.0,
        t_first_token=1.0,
        t_end=2.0,
        forced_tokens=5,
        forced_prefix_tokens=3,
    )
    # 13 tokens: 3 forced with the prompt, the first sampled one at t=1, 9 more by t=2.
    assert compute_timings(forced).decode_tok_s == 9.0


def test_a_sample_record_carries_its_timings_and_every_familys_scores() -> None:
    job = Job(4, example(4), "the prompt", 64)
    families = select_families("edgejson", ("structure",), {})
    sample = build_sample(job, "m", "none", gen(text=RIGHT), families)
    assert (sample.index, sample.id, sample.model, sample.constraint) == (4, "ex4", "m", "none")
    assert sample.timings == compute_timings(gen(text=RIGHT))
    assert list(sample.scores or {}) == ["edgejson", "structure"]
    assert sample.scores is not None and sample.scores["edgejson"]["json_exact"] == 1
    assert sample.parse is not None and sample.parse.ok and sample.parsed == {"a": 1}
    assert sample.sampling is None and not sample.worker_failure


def test_a_lost_example_is_scored_as_a_wrong_answer_and_marked_for_resume() -> None:
    job = Job(0, example(0), "p", 64)
    lost = nothing_decoded("crashed", "the model worker was killed by SIGKILL")
    sample = build_sample(job, "m", "none", lost, select_families("edgejson", (), {}))
    assert sample.worker_failure and sample.error == "the model worker was killed by SIGKILL"
    assert sample.scores is not None and sample.scores["edgejson"]["json_exact"] == 0
    assert sample.timings.ttft_s is None and sample.timings.decode_tok_s is None


def test_a_sample_record_keeps_each_decode_phases_calls_total_and_percentiles() -> None:
    job = Job(0, example(0), "p", 64)
    mask_ns = [10_000] * 98 + [500_000, 900_000]  # 100 masks, two slow ones
    timed = gen(text=RIGHT, step_ns={"mask": mask_ns, "decode": [8_000_000] * 10, "guard": []})
    sample = build_sample(job, "m", "mask", timed, select_families("edgejson", (), {}))
    mask = sample.step_times["mask"]
    assert (mask.calls, mask.p50_us) == (100, 10.0)
    assert mask.total_ms == pytest.approx(2.38)
    assert mask.p99_us == pytest.approx(504.0)  # rank 98.01: 500 µs + 1% of the way to 900
    assert sample.step_times["decode"].p99_us == 8000.0
    assert "guard" not in sample.step_times  # a phase that never ran is not recorded


def test_a_sample_line_written_before_format_2_6_reads_without_step_times() -> None:
    from edgebench.runfolder.records import SampleRecord

    job = Job(0, example(0), "p", 64)
    sample = build_sample(job, "m", "none", gen(text=RIGHT), select_families("edgejson", (), {}))
    line = sample.to_json()
    del line["step_times"]
    assert SampleRecord.from_json(line).step_times == {}
