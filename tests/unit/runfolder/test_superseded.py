"""samples.jsonl is append-only: a re-timed example's later line (passes > 1) supersedes
its first, and every reader (`read_samples`) sees the final record in the first's place."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from edgebench.io import JsonlAppender
from edgebench.runfolder.read import read_samples, superseded
from edgebench.runfolder.records import SampleRecord
from edgebench.runner.jobs import Job
from edgebench.runner.resume import resume_point
from edgebench.runner.samples import build_sample, nothing_decoded
from tests.helpers.fakes import example


def record(example_id: str, passes: int = 1, finish: str = "stop") -> SampleRecord:
    index = int(example_id[-1])
    answer = nothing_decoded(finish, "lost") if finish != "stop" else nothing_decoded("stop", "")
    sample = build_sample(Job(index, example(index), "p", 8), "m", "none", answer, [])
    return replace(sample, passes=passes, error=None if finish == "stop" else sample.error)


def test_a_later_pass_takes_the_first_ones_place() -> None:
    lines = [record("ex0"), record("ex1"), record("ex0", passes=2)]
    final = superseded(lines)
    assert [(r.id, r.passes) for r in final] == [("ex0", 2), ("ex1", 1)]


def test_a_crashed_record_is_not_what_a_pass_supersedes() -> None:
    lines = [record("ex0", finish="crashed"), record("ex0"), record("ex0", passes=3)]
    final = superseded(lines)
    assert [(r.finish_reason, r.passes) for r in final] == [("crashed", 1), ("stop", 3)]
    kept = resume_point(final, torn=False)
    assert [(r.id, r.passes) for r in kept.samples] == [("ex0", 3)] and kept.retried == 1


def test_a_final_record_alone_stays_where_it_is() -> None:
    """A file rewritten by --resume (or `score`) holds the final record only."""
    lines = [record("ex0", passes=2), record("ex1")]
    assert superseded(lines) == lines


def test_read_samples_gives_the_final_records(tmp_path: Path) -> None:
    with JsonlAppender(tmp_path / "samples.jsonl") as log:
        for line in [record("ex0"), record("ex1"), record("ex1", passes=2)]:
            log.append(line.to_json())
    samples, torn = read_samples(tmp_path)
    assert not torn
    assert [(r.id, r.passes) for r in samples] == [("ex0", 1), ("ex1", 2)]
