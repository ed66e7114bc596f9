"""Contention in every run and the re-timing of what it disturbed (`--retime`): each
sample's `cpu` block from the CPU times around its decode, contended examples decoded
again after their arm until a clean pass, the first pass's output kept and checked byte
for byte, and a run stopped while re-timing resumed. The machine is a fake one
(tests/helpers/cpu_times.py) whose every interval has the shares the test chooses."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.io import read_jsonl
from edgebench.runfolder.read import read_samples
from edgebench.runfolder.records import SampleRecord
from edgebench.runner.engine import RunInterrupted
from tests.helpers.cpu_times import CLEAN, CONTENDED, STOLEN, FakeCpuTimes, always, scripted
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

SLOW, FAST = 0.1, 0.01  # seconds per output token: a disturbed pass, a clean one


class PassTimed(FakeBackend):
    """Answers RIGHT to every prompt (2 tokens + end of turn: decode tok/s is 1 / the
    seconds per token); a prompt's first pass is SLOW, its later passes FAST. `changed`:
    (example text, pass) answered with a trailing space instead, as a nondeterministic runtime
    would. `stop_on`: the generate call (1-based) that raises Ctrl-C."""

    def __init__(self, changed: tuple[str, int] | None = None, stop_on: int | None = None):
        super().__init__(default_output=RIGHT)
        self.passes: dict[str, int] = {}
        self.changed = changed
        self.stop_on = stop_on
        self.calls = 0

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        self.calls += 1
        if self.calls == self.stop_on:
            raise KeyboardInterrupt
        text = prompt.split("\n", 1)[0]  # the example's text
        n = self.passes[text] = self.passes.get(text, 0) + 1
        self.timings = FakeTimings(per_output_token=SLOW if n == 1 else FAST)
        gen = super().generate(prompt, settings)
        if (text, n) == self.changed:
            gen = replace(gen, text=gen.text + " ")
        return gen


# the texts of examples ex0, ex1, ex2 (tests/helpers/fakes.py: index + 2 words)
PROMPTS = ["word word", "word word word", "word word word word"]


def samples_of(run_dir: Path) -> dict[str, SampleRecord]:
    return {s.id: s for s in read_samples(run_dir)[0]}


def test_every_sample_has_a_cpu_block_and_a_quiet_run_is_clean(run_fake: RunFake) -> None:
    backend = PassTimed()
    result = run_fake(backend, n=3, cpu_times=always(CLEAN))
    samples = samples_of(result.run_dir)
    for sample in samples.values():
        assert sample.cpu is not None and sample.passes == 1
        assert sample.cpu.others_share == 0.0 and sample.cpu.steal_share == 0.0
        assert sample.cpu.worker_cpu_s == pytest.approx(0.9)  # the fake's busy time, ours
    assert backend.calls == 3  # nothing re-timed
    (arm,) = result.summary.arms
    assert arm.perf.contended_examples == 0 and arm.perf.speed_clean


@pytest.mark.parametrize("shares", [CONTENDED, STOLEN], ids=["others", "steal"])
def test_without_retiming_contended_examples_are_counted_and_the_speed_not_clean(
    run_fake: RunFake, shares: tuple[float, float]
) -> None:
    backend = PassTimed()
    result = run_fake(backend, n=3, cpu_times=always(shares), retime="none")
    samples = samples_of(result.run_dir)
    assert backend.calls == 3
    assert all(s.contended and s.passes == 1 for s in samples.values())
    cpu = samples["ex0"].cpu
    assert cpu is not None and (cpu.others_share, cpu.steal_share) == pytest.approx(shares)
    (arm,) = result.summary.arms
    assert arm.perf.contended_examples == 3 and not arm.perf.speed_clean


def test_contended_examples_are_re_timed_until_a_clean_pass(run_fake: RunFake) -> None:
    # Intervals: first passes ex0 contended, ex1 clean, ex2 stolen; then re-timing: ex0
    # clean at once, ex2 contended once more, then clean.
    script = [CONTENDED, CLEAN, STOLEN, CLEAN, CONTENDED, CLEAN]
    backend = PassTimed()
    result = run_fake(backend, n=3, cpu_times=scripted(script))
    assert backend.calls == 6
    samples = samples_of(result.run_dir)
    ex0, ex1, ex2 = samples["ex0"], samples["ex1"], samples["ex2"]
    assert ex1.passes == 1 and ex1.timings_disturbed == [] and not ex1.contended
    assert ex0.passes == 2 and not ex0.contended and not ex0.retime_mismatch
    assert ex0.timings.decode_tok_s == pytest.approx(1 / FAST)  # the clean pass's
    assert [t.decode_tok_s for t in ex0.timings_disturbed] == pytest.approx([1 / SLOW])
    assert [c.others_share for c in ex0.cpu_disturbed] == pytest.approx([0.5])
    assert ex2.passes == 3 and not ex2.contended
    assert [t.decode_tok_s for t in ex2.timings_disturbed] == pytest.approx([1 / SLOW, 1 / FAST])
    assert [(c.others_share, c.steal_share) for c in ex2.cpu_disturbed] == [STOLEN, CONTENDED]
    # the first pass's output and scores stay
    assert ex0.raw_output == RIGHT and ex0.scores is not None
    # the log is append-only: the re-timed examples' lines supersede their first lines
    lines = read_jsonl(result.run_dir / "samples.jsonl")
    assert [(line["id"], line["passes"]) for line in lines] == [
        ("ex0", 1),
        ("ex1", 1),
        ("ex2", 1),
        ("ex0", 2),
        ("ex2", 3),
    ]
    (arm,) = result.summary.arms
    assert arm.perf.contended_examples == 0 and arm.perf.speed_clean
    assert arm.perf.decode_tok_s.p50 == pytest.approx(1 / FAST)


def test_no_clean_pass_keeps_the_first_timings_and_records_the_others(
    run_fake: RunFake,
) -> None:
    backend = PassTimed()
    result = run_fake(backend, n=1, cpu_times=always(CONTENDED), retime_max=3)
    assert backend.calls == 4
    (sample,) = samples_of(result.run_dir).values()
    assert sample.passes == 4 and sample.contended
    assert sample.timings.decode_tok_s == pytest.approx(1 / SLOW)
    assert len(sample.timings_disturbed) == len(sample.cpu_disturbed) == 3
    (arm,) = result.summary.arms
    assert arm.perf.contended_examples == 1 and not arm.perf.speed_clean


def test_a_re_timed_output_that_differs_is_recorded_and_its_timings_not_taken(
    run_fake: RunFake,
) -> None:
    backend = PassTimed(changed=(PROMPTS[0], 2))
    result = run_fake(backend, n=2, cpu_times=scripted([CONTENDED, CONTENDED, CLEAN, CLEAN]))
    samples = samples_of(result.run_dir)
    ex0, ex1 = samples["ex0"], samples["ex1"]
    assert ex0.retime_mismatch and ex0.passes == 2
    assert ex0.raw_output == RIGHT  # the first pass's, byte for byte
    assert ex0.timings.decode_tok_s == pytest.approx(1 / SLOW) and ex0.contended
    assert not ex1.retime_mismatch and ex1.passes == 2 and not ex1.contended
    (arm,) = result.summary.arms
    assert arm.perf.contended_examples == 1


def test_a_draw_at_a_temperature_is_not_re_timed(run_fake: RunFake) -> None:
    from edgebench.runner.jobs import ConsistencyRun

    backend = FakeBackend(sampled=[RIGHT])
    result = run_fake(
        backend,
        n=1,
        kind=ConsistencyRun(samples=2, temperatures=(0.7,), seed=0),  # type: ignore[arg-type]
        cpu_times=always(CONTENDED),
    )
    assert len(backend.prompts) == 2
    assert all(s.passes == 1 and s.contended for s in read_samples(result.run_dir)[0])


def test_a_run_stopped_while_re_timing_resumes_with_what_is_left(
    run_fake: RunFake, tmp_path: Path
) -> None:
    script = [CONTENDED, CLEAN, CONTENDED, CLEAN]
    # calls 1-3 first passes, 4 re-times ex0, 5 (ex2) is Ctrl-C
    with pytest.raises(RunInterrupted):
        run_fake(PassTimed(stop_on=5), n=3, cpu_times=scripted(script))
    out = tmp_path / "run"
    kept = samples_of(out)
    assert kept["ex0"].passes == 2 and kept["ex2"].passes == 1 and kept["ex2"].contended

    backend = PassTimed()
    result = run_fake(backend, n=3, resume=True, cpu_times=always(CLEAN))
    assert [p.split("\n")[0] for p in backend.prompts] == [PROMPTS[2]]  # ex2 once, re-timed
    samples = samples_of(out)
    assert [s.id for s in read_samples(out)[0]] == ["ex0", "ex1", "ex2"]
    assert samples["ex0"].passes == 2 and samples["ex2"].passes == 2
    assert not samples["ex2"].contended
    assert samples["ex2"].timings.decode_tok_s == pytest.approx(1 / SLOW)  # this session's 1st
    (arm,) = result.summary.arms
    assert arm.perf.contended_examples == 0 and arm.perf.speed_clean
    # and a second resume has nothing left to decode
    again = PassTimed()
    run_fake(again, n=3, resume=True, cpu_times=always(CONTENDED))
    assert again.prompts == []


def test_the_run_table_says_which_arm_is_not_clean_in_one_line(run_fake: RunFake) -> None:
    from rich.console import Console

    from edgebench.report.table import render_summary

    # one source per arm (no timeline): the `none` arm contended, the `json` arm clean
    sources = iter([FakeCpuTimes([CONTENDED]), FakeCpuTimes([CLEAN])])
    result = run_fake(
        PassTimed(),
        n=2,
        constraints=("none", "json"),
        cpu_times=lambda: next(sources),
        retime="none",
        timeline=False,
    )
    console = Console(record=True, width=300)
    console.print(render_summary(result.summary))
    lines = [line for line in console.export_text().splitlines() if "not clean" in line]
    assert lines == [
        "not clean: none: 2 of 2 timed examples were decoded while other processes or virtual "
        "machines took more than 5% of the CPU (after re-timing); its speed figures are "
        "disturbed"
    ]
