"""`compare`'s `cached ms` for an engine that compiles the grammar again inside every
answer (OpenVINO GenAI's XGrammar: each sample's `grammar_compile_ms`): the p50 of those
compiles, marked `a`, not the cache hit of a few µs; engines that reuse their compile,
and run folders whose answers recorded no such counter, keep the cache hit."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.report.compare import PER_ANSWER_NOTE, compare_rows, compare_table
from edgebench.summary import load_run
from tests.helpers.fakes import RIGHT, WRONG
from tests.helpers.run_fake import RunFake
from tests.helpers.tables import cells

COMPILES_MS = [1.0, 1.5, 2.0]  # each constrained answer's own compile


class RecompilingFake(FakeBackend):
    """The fake backend whose constrained answers each report a grammar compile."""

    def __init__(self) -> None:
        super().__init__([RIGHT, WRONG, RIGHT])
        self.compiles = list(COMPILES_MS)

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        gen = super().generate(prompt, settings)
        if settings.constraint is None:
            return gen
        counters = {**gen.runtime_counters, "grammar_compile_ms": self.compiles.pop(0)}
        return dataclasses.replace(gen, runtime_counters=counters)


@pytest.fixture
def run_dir(run_fake: RunFake) -> Path:
    def factory(model: Any, mode: str) -> InProcessWorker:
        return InProcessWorker(RecompilingFake())

    return run_fake(constraints=("none", "json"), factory=factory).run_dir


def rows_by_mode(run_dir: Path) -> dict[str, dict[str, Any]]:
    return {row["constraint"]: row for row in compare_rows([load_run(run_dir).summary])}


def test_cached_ms_is_each_answers_own_compile(run_dir: Path) -> None:
    summary = load_run(run_dir).summary
    json_arm = summary.arm("fake-model", "json")
    assert json_arm is not None and json_arm.compile.per_answer_s is not None
    assert json_arm.compile.per_answer_s.n == 3
    assert json_arm.compile.per_answer_s.p50 == pytest.approx(0.0015)
    rows = rows_by_mode(run_dir)
    assert rows["json"]["cached_compile_ms_p50"] == pytest.approx(1.5)
    assert rows["json"]["compiled_per_answer"] is True
    assert rows["none"]["compiled_per_answer"] is False
    table = compare_table([summary])
    assert "1.500a" in cells(table)
    assert PER_ANSWER_NOTE in str(table.caption)


def test_a_folder_without_the_counter_keeps_the_cache_hit(run_dir: Path) -> None:
    # As an engine that reuses its compile writes it (or a folder before the counter).
    samples = run_dir / "samples.jsonl"
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    for line in lines:
        line["runtime_counters"].pop("grammar_compile_ms", None)
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    summary = load_run(run_dir).summary
    json_arm = summary.arm("fake-model", "json")
    assert json_arm is not None and json_arm.compile.per_answer_s is None
    row = rows_by_mode(run_dir)["json"]
    assert row["compiled_per_answer"] is False
    cached = json_arm.compile.cached_s.p50
    expected = cached * 1000 if cached is not None else None
    assert row["cached_compile_ms_p50"] == expected
    table = compare_table([summary])
    assert not any(cell.endswith("a") for cell in cells(table) if cell[:1].isdigit())
    assert PER_ANSWER_NOTE not in str(table.caption)
