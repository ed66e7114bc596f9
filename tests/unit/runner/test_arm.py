"""One arm (a model under one constraint mode) on its own, in this process."""

from __future__ import annotations

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.metrics import select_families
from edgebench.runfolder.records import ArmRecord, RunSettings, SampleRecord
from edgebench.runner.arm import Arm
from edgebench.runner.jobs import Job
from tests.helpers.fakes import examples, fake_model


def test_an_arm_whose_jobs_are_all_skipped_starts_no_worker() -> None:
    started: list[int] = []
    samples: list[SampleRecord] = []

    def make_worker() -> InProcessWorker:
        started.append(1)
        return InProcessWorker(FakeBackend([]))

    arm = Arm(
        model=fake_model(),
        mode="mask",
        settings=RunSettings(),
        n_ctx=512,
        stop=(),
        make_worker=make_worker,
        record=ArmRecord("fake-model", "mask", "running"),
        on_sample=samples.append,
        families=select_families("edgejson", (), {}),
    )
    arm.run([Job(i, e, "prompt", 64, "too long") for i, e in enumerate(examples(3))])
    assert started == []
    assert [s.finish_reason for s in samples] == ["skipped"] * 3
    assert all(s.error == "skipped: too long" and s.scores is None for s in samples)
    assert arm.record.load_s is None and arm.record.memory is None  # nothing was loaded
