"""Trouble a run meets in this process: a model too big for memory is refused with both
figures, a full disk stops the run with a `RunFailure` that says what is safe and how to
continue. Workers that die or hang (real processes) are in tests/system/test_faults.py."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from edgebench.errors import RunFailure, UserError
from edgebench.io import read_jsonl
from tests.helpers.fakes import RIGHT, fake_model
from tests.helpers.run_fake import RunFake


def test_a_model_too_big_for_memory_is_refused_with_both_figures(
    run_fake: RunFake, tmp_path: Path
) -> None:
    huge = fake_model(size_bytes=1 << 50, kv_bytes_per_token=1 << 20)
    with pytest.raises(UserError) as info:
        run_fake(n=2, models=[huge])
    message = str(info.value)
    assert message.startswith("not enough memory for fake-model: it needs about 1,073,742,")
    assert "(model file 1,073,741,824 MB + KV cache 256 MB at n_ctx 256) but " in message
    assert message.endswith(
        " MB is available; free memory, lower --n-ctx, or pass --ignore-memory-check"
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["arms"] == []
    check = manifest["models"][0]["plan"]["memory_check"]
    assert check["fits"] is False and check["enforced"] is True
    assert check["needed_bytes"] > check["available_bytes"]
    assert not (tmp_path / "run" / "samples.jsonl").exists()
    # The override runs it anyway (the fake needs no memory), and says it did.
    result = run_fake(n=2, models=[huge], check_memory=False, out=tmp_path / "run2")
    assert result.summary.arms[0].n_examples == 2
    manifest = json.loads((tmp_path / "run2" / "manifest.json").read_text())
    check = manifest["models"][0]["plan"]["memory_check"]
    assert check["fits"] is False and check["enforced"] is False


def fail_fsync_for(monkeypatch: pytest.MonkeyPatch, name_part: str, after: int = 0) -> list[str]:
    """Make fsync of files whose name contains `name_part` fail with ENOSPC (after
    `after` successful calls), as a full disk would."""
    import edgebench.io as io_module

    real_fsync = os.fsync
    calls: list[str] = []

    def fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        if name_part in target:
            calls.append(target)
            if len(calls) > after:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(io_module.os, "fsync", fsync)
    return calls


def test_enospc_on_the_summary_write_leaves_the_old_summary_intact(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_fake([RIGHT] * 3)
    run_dir = tmp_path / "run"
    before = (run_dir / "summary.json").read_bytes()
    calls = fail_fsync_for(monkeypatch, ".summary.json.")
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 3, resume=True)
    assert calls  # the write was attempted
    assert str(info.value) == (
        f"could not write to {run_dir / 'summary.json'}: No space left on device; the previous "
        f"summary.json is unchanged and samples.jsonl holds 3 examples; free space, then "
        f"continue with `edgebench run --resume {run_dir}`"
    )
    assert (run_dir / "summary.json").read_bytes() == before
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "manifest.json",
        "samples.jsonl",
        "summary.json",
        "timeline.jsonl",
    ]


def test_enospc_on_a_sample_append_stops_the_run_and_resume_finishes_it(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = tmp_path / "run"
    fail_fsync_for(monkeypatch, "samples.jsonl", after=2)
    with pytest.raises(RunFailure) as info:
        run_fake([RIGHT] * 5, n=5)
    assert str(info.value) == (
        f"could not write to {run_dir}: No space left on device; 2 completed examples are "
        f"safe in samples.jsonl; free space, then continue with `edgebench run --resume "
        f"{run_dir}`"
    )
    monkeypatch.undo()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "No space left on device" in manifest["error"]
    run_fake([RIGHT] * 5, n=5, resume=True)
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [s["id"] for s in samples] == [f"ex{i}" for i in range(5)]
    assert all(s["scores"]["edgejson"]["json_exact"] == 1 for s in samples)
