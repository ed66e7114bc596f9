"""--resume in this process: a stopped run ends with the same samples as an uninterrupted
one (worker failures run again, a torn last line and duplicates are dropped); what may and
may not differ; broken and locked folders. Runs stopped from outside (killed workers,
killed parents, SIGINT) are in tests/system/test_resume_process.py."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runfolder.folder import LOCK_FILE, RunLock
from edgebench.runfolder.records import DatasetRecord
from edgebench.runner.engine import RunInterrupted
from tests.helpers.fakes import fake_model, in_process
from tests.helpers.faults import DyingWorker, Hook, echo_examples, interrupt_after
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of, sample_content

N = 6


def echo_run(run_fake: RunFake, out: Path, **kw: Any) -> Any:
    """N examples, the fake answering each prompt (a distinct JSON object) verbatim."""
    return run_fake(FakeBackend(echo=True), examples=echo_examples(N), out=out, **kw)


@pytest.fixture
def reference(run_fake: RunFake, tmp_path: Path) -> Path:
    """An uninterrupted run of two modes."""
    out = tmp_path / "reference"
    echo_run(run_fake, out, constraints=("none", "json"))
    return out


def test_the_reference_run_has_right_and_wrong_answers(reference: Path) -> None:
    exact = [s[6]["edgejson"]["json_exact"] for s in sample_content(reference)]
    assert exact == [0, 1, 1, 0, 1, 1] * 2  # the resumes below compare real scores


def test_worker_failures_run_again_and_the_result_matches_an_uninterrupted_run(
    run_fake: RunFake, tmp_path: Path, reference: Path
) -> None:
    out = tmp_path / "run"
    backend = FakeBackend(echo=True)
    # The worker "dies" on ex2 of each arm; a fresh worker goes on with the rest.
    first = echo_run(
        run_fake,
        out,
        constraints=("none", "json"),
        factory=lambda model, mode: DyingWorker(backend, marker='"a": 2}'),
    )
    assert first.worker_failures == 2
    lost = [s for s in read_jsonl(out / "samples.jsonl") if s["finish_reason"] == "crashed"]
    assert [(s["constraint"], s["id"]) for s in lost] == [("none", "ex2"), ("json", "ex2")]
    assert "SIGKILL" in lost[0]["error"] and "'ex2' (fake-model, none)" in lost[0]["error"]
    assert first.summary.arm("fake-model", "none").n_crashed == 1

    result = echo_run(run_fake, out, constraints=("none", "json"), resume=True)
    # The retried ones are back in run order.
    assert sample_content(out) == sample_content(reference)
    manifest = manifest_of(out)
    assert manifest["status"] == "completed" and result.worker_failures == 0
    (entry,) = manifest["resumes"]
    assert entry["previous_status"] == "completed"
    assert entry["worker_failures_retried"] == 2 and entry["samples_kept"] == 2 * N - 2
    assert entry["torn_line_dropped"] is False and entry["stale_lock"] is None
    arm = result.summary.arm("fake-model", "none")
    assert arm is not None and arm.n_examples == N and arm.n_crashed == 0


def test_an_interrupted_run_with_a_torn_line_and_a_duplicate_resumes_to_the_same_samples(
    run_fake: RunFake, tmp_path: Path, reference: Path
) -> None:
    out = tmp_path / "run"
    with pytest.raises(RunInterrupted) as stopped:
        echo_run(run_fake, out, constraints=("none", "json"), progress=interrupt_after(N + 2))
    assert stopped.value.n_samples == N + 2
    assert manifest_of(out)["status"] == "interrupted"
    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    # A record appended twice (a crash between append and bookkeeping), then a power
    # cut in the middle of the next append.
    (out / "samples.jsonl").write_text("".join([*lines, lines[1], '{"index": 3, "id": "ex']))

    result = echo_run(run_fake, out, constraints=("none", "json"), resume=True)
    assert sample_content(out) == sample_content(reference)
    (entry,) = manifest_of(out)["resumes"]
    assert entry["previous_status"] == "interrupted"
    assert entry["torn_line_dropped"] is True and entry["duplicates_dropped"] == 1
    assert entry["samples_kept"] == N + 2
    assert [a.status for a in result.summary.arms] == ["completed", "completed"]


def test_a_completed_run_resumes_without_decoding_anything(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, out)
    before = sample_content(out)
    backend = FakeBackend(echo=True)
    echo_run(run_fake, out, resume=True, factory=in_process(backend))
    assert sample_content(out) == before
    assert backend.prompts == []  # only the token count of the plan
    assert manifest_of(out)["resumes"][0]["samples_kept"] == N


def resume_other(run_fake: RunFake, *, model: Any = None, dataset_sha: str = "d" * 64) -> None:
    """Resume tmp_path/run with another model or dataset record than `first_run` made."""
    run_fake(
        FakeBackend(echo=True),
        examples=echo_examples(N),
        models=[model or fake_model()],
        dataset_record=DatasetRecord(path="mem", sha256=dataset_sha),
        resume=True,
    )


@pytest.fixture
def first_run(run_fake: RunFake) -> Path:
    """A completed run whose dataset record has a sha256."""
    dataset = DatasetRecord(path="mem", sha256="d" * 64)
    backend = FakeBackend(echo=True)
    return run_fake(backend, examples=echo_examples(N), dataset_record=dataset).run_dir


def test_resume_refuses_another_model(first_run: Path, run_fake: RunFake) -> None:
    with pytest.raises(
        UserError,
        match=r"cannot resume .*: model sha256 differs \(run: 000000000000…, now: 111111111111…\)",
    ):
        resume_other(run_fake, model=fake_model(sha256="1" * 64))
    resume_other(run_fake)  # the same model and dataset: accepted


def test_resume_refuses_another_dataset(first_run: Path, run_fake: RunFake) -> None:
    with pytest.raises(
        UserError, match=r"dataset sha256 differs \(run: dddddddddddd…, now: eeeeeeeeeeee…\)"
    ):
        resume_other(run_fake, dataset_sha="e" * 64)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"limit": 3}, r"setting --limit differs \(run: None, now: 3\)"),
        ({"threads": 7}, r"setting --threads differs \(run: 2, now: 7\)"),
        ({"max_tokens": 5}, r"setting --max-tokens differs"),
        ({"constraints": ("none", "json")}, r"setting --constraint differs"),
        ({"warmup": True}, r"setting --warmup/--no-warmup differs"),
        ({"metrics": ("sted",)}, r"setting --metrics differs"),
        ({"prompt": "reference"}, r"setting --prompt differs \(run: default, now: reference\)"),
    ],
)
def test_resume_refuses_other_settings(
    run_fake: RunFake, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, out)
    with pytest.raises(UserError, match=r"cannot resume .*: " + message):
        echo_run(run_fake, out, resume=True, **change)
    assert manifest_of(out)["resumes"] == []  # refused before anything was written


def test_resume_refuses_a_run_recorded_with_another_prompt_style(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """A manifest whose task record says another style (the settings agreeing) is refused
    too: the style recorded beside the template is checked on its own."""
    out = tmp_path / "run"
    echo_run(run_fake, out, prompt="reference")
    manifest = manifest_of(out)
    manifest["task"]["prompt_style"] = "default"
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(
        UserError, match=r"prompt style \(--prompt\) differs \(run: default, now: reference\)"
    ):
        echo_run(run_fake, out, resume=True, prompt="reference")


def test_resume_may_change_timeout_crash_limit_and_memory_check(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        echo_run(run_fake, out, progress=interrupt_after(2))
    result = echo_run(
        run_fake,
        out,
        resume=True,
        timeout=30.0,
        compile_timeout=5.0,
        max_crashes=5,
        check_memory=False,
    )
    assert [s["id"] for s in read_jsonl(out / "samples.jsonl")] == [f"ex{i}" for i in range(N)]
    assert result.summary.arms[0].n_examples == N and result.summary.status == "completed"


def test_resume_of_a_missing_or_broken_folder(run_fake: RunFake, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such run folder"):
        echo_run(run_fake, tmp_path / "nope", resume=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"not a run folder \(no manifest.json\)"):
        echo_run(run_fake, tmp_path / "empty", resume=True)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{oops")
    with pytest.raises(UserError, match=r"manifest.json: not valid JSON"):
        echo_run(run_fake, tmp_path / "broken", resume=True)


def test_a_corrupt_line_inside_samples_is_refused_with_its_line(
    run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, out)
    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    lines[2] = "{garbage\n"
    (out / "samples.jsonl").write_text("".join(lines))
    with pytest.raises(UserError, match=r"samples.jsonl: line 3: not valid JSON"):
        echo_run(run_fake, out, resume=True)


def test_a_second_run_cannot_write_a_locked_folder(run_fake: RunFake, tmp_path: Path) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, out)
    holder = RunLock(out).acquire()  # as a run in progress would
    try:
        with pytest.raises(
            UserError, match=rf"in use by another edgebench run \(pid {os.getpid()} on"
        ):
            echo_run(run_fake, out, resume=True)
        with pytest.raises(UserError, match="in use by another edgebench run"):
            echo_run(run_fake, out)  # a new run with the same --out
    finally:
        holder.release()
    echo_run(run_fake, out, resume=True)  # free again
    assert not (out / LOCK_FILE).exists()


def test_a_lock_file_nobody_holds_is_taken_over_and_recorded(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """The lock is the flock, not the file: a file left by a process that died (no flock
    held) is stale; its content names the dead holder in the resume record."""
    out = tmp_path / "run"
    echo_run(run_fake, out)
    stale = {"pid": 4_000_000, "host": "elsewhere", "since": "then"}
    (out / LOCK_FILE).write_text(json.dumps(stale))
    echo_run(run_fake, out, resume=True)
    assert manifest_of(out)["resumes"][-1]["stale_lock"] == stale
    assert not (out / LOCK_FILE).exists()


def test_resume_hint_for_a_non_empty_out(run_fake: RunFake, tmp_path: Path) -> None:
    out = tmp_path / "run"
    echo_run(run_fake, out)
    with pytest.raises(
        UserError, match="not empty; choose another --out or continue it with --resume"
    ):
        echo_run(run_fake, out)


def _swallow_a_ctrl_c() -> None:
    """A Ctrl-C arriving in the progress display and swallowed there, as a finalizer
    would ("Exception ignored in ...")."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler runs here
    except KeyboardInterrupt:
        pass


def test_a_ctrl_c_swallowed_mid_run_still_stops_it(run_fake: RunFake, tmp_path: Path) -> None:
    out = tmp_path / "run"
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        with pytest.raises(RunInterrupted) as stopped:
            echo_run(run_fake, out, progress=Hook(2, _swallow_a_ctrl_c))
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stopped.value.resume == f"edgebench run --resume {out}"
    assert len(read_jsonl(out / "samples.jsonl")) == 2
    assert manifest_of(out)["status"] == "interrupted"
