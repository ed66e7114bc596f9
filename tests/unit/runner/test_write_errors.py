"""Every refused write, not only a full disk: a quota (EDQUOT), a file system remounted
read-only (EROFS) and a failing disk (EIO), at each stage of a run (the run lock, the
first manifest, the idle baseline's timeline rows, a sample, the manifest between arms,
the summary). Each ends in one line naming the folder and what to do (`free space` for
a full disk or quota, `fix it` otherwise), never an OSError traceback; once a manifest
exists it is marked, and the hint's `--resume` continues the run when the disk is back."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from edgebench.errors import RunFailure, UserError
from edgebench.runfolder.folder import LOCK_FILE
from tests.helpers.fakes import RIGHT
from tests.helpers.full_disk import FullDisk, full_disk
from tests.helpers.power import FakePower
from tests.helpers.run_fake import RunFake

ERRORS = {
    "EDQUOT": errno.EDQUOT,
    "EROFS": errno.EROFS,
    "EIO": errno.EIO,
}
# where writes are refused: (a part of the file's path, writes let through first, how
# many are refused: None for all; the manifest between arms once, else nothing could mark
# the run)
STAGES = {
    "the run lock": (LOCK_FILE, 0, None),
    "the first manifest": (".manifest.json.", 0, None),
    "the idle baseline": ("timeline.jsonl", 0, None),
    "a sample": ("samples.jsonl", 1, None),
    "the manifest between arms": (".manifest.json.", 4, 1),
    "the summary": (".summary.json.", 0, None),
}


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> FullDisk:
    return full_disk(monkeypatch)


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("code", list(ERRORS))
def test_every_refused_write_at_every_stage_is_one_line_and_resumable(
    run_fake: RunFake, tmp_path: Path, disk: FullDisk, code: str, stage: str
) -> None:
    part, after, times = STAGES[stage]
    disk.error = ERRORS[code]
    disk.fill(part, after=after, times=times)
    meter = FakePower(lambda t: 4.0)
    run = {"n": 2, "power": meter.choice(), "idle_baseline": 0.05}
    with pytest.raises((RunFailure, UserError)) as info:
        run_fake([RIGHT] * 2, **run)
    message = str(info.value)
    run_dir = tmp_path / "run"
    assert "\n" not in message and os.strerror(ERRORS[code]) in message, message
    assert str(run_dir) in message, message
    manifest = run_dir / "manifest.json"
    if manifest.exists():
        stored = json.loads(manifest.read_text())
        assert stored["status"] == "failed", (message, stored["status"])
        assert f"edgebench run --resume {run_dir}" in message
    disk.free()
    resumed = manifest.exists()
    result = run_fake([RIGHT] * 2, **run, resume=resumed)
    assert result.summary.arms[0].n_examples == 2
    assert json.loads(manifest.read_text())["status"] == "completed"
