"""The failure vocabulary (edgebench/failures.py): every worker ending (each signal, an
exit status, none), timeout, error, refusal, memory cap, every refused write by errno and
Ctrl-C -> its kind, exit code, one line and hint; the run's endings built from them."""

from __future__ import annotations

import errno
import os
import re
import signal
from pathlib import Path

import pytest

from edgebench import failures, io
from edgebench.errors import RunFailure, UserError
from edgebench.failures import (
    EXIT_CODES,
    OutOfMemory,
    WorkerDied,
    WorkerError,
    WorkerTimeout,
    classify,
    run_failure,
    write_failure,
)
from edgebench.runner.workers import example_failure

ILL = "llama-cpp-python built for another CPU? reinstall with ./install.sh"
WHERE = "on example 'e1' (m · none)"


def _os_error(code: int, filename: str | None = "out/x.json") -> OSError:
    return OSError(code, os.strerror(code), filename)


# (exception, kind, exit code, line, hint)
CASES = [
    (
        WorkerDied(-signal.SIGSEGV, "generate"),
        "crashed",
        1,
        f"the model worker was killed by SIGSEGV (Segmentation fault) {WHERE}",
        None,
    ),
    (
        WorkerDied(-signal.SIGILL, "load"),
        "crashed",
        1,
        f"the model worker was killed by SIGILL (Illegal instruction) ({ILL}) {WHERE}",
        ILL,
    ),
    (
        WorkerDied(-signal.SIGKILL, "generate"),
        "crashed",
        1,
        f"the model worker was killed by SIGKILL (Killed) (out of memory?) {WHERE}",
        "out of memory?",
    ),
    (
        WorkerDied(-signal.SIGABRT, "count_tokens"),
        "crashed",
        1,
        f"the model worker was killed by SIGABRT (Aborted) {WHERE}",
        None,
    ),
    (
        WorkerDied(-200, "generate"),
        "crashed",
        1,
        f"the model worker was killed by signal 200 {WHERE}",
        None,
    ),
    (WorkerDied(3, "generate"), "crashed", 1, f"the model worker exited with code 3 {WHERE}", None),
    (
        WorkerDied(None, "generate"),
        "crashed",
        1,
        f"the model worker stopped answering {WHERE}",
        None,
    ),
    (
        WorkerTimeout("generate", 2.5),
        "timeout",
        1,
        f"no answer within --timeout 2.5 s {WHERE}; worker killed",
        "raise --timeout",
    ),
    (
        WorkerError("RuntimeError", "llama_decode returned -1", "tb"),
        "error",
        1,
        f"the backend failed {WHERE}: RuntimeError: llama_decode returned -1",
        None,
    ),
    (
        WorkerError("UserError", "m.gguf: not a GGUF file", "tb"),
        "refused",
        2,
        f"the backend failed {WHERE}: UserError: m.gguf: not a GGUF file",
        None,
    ),
    (
        WorkerError("UnsupportedConstraint", "no grammar", "tb"),
        "refused",
        2,
        f"the backend failed {WHERE}: UnsupportedConstraint: no grammar",
        None,
    ),
    (
        OutOfMemory(512 * 2**20),
        "out_of_memory",
        1,
        f"the model worker {WHERE} needed more than 512 MB",
        None,
    ),
    (
        _os_error(errno.ENOSPC),
        "disk_full",
        1,
        "out/x.json: cannot write (No space left on device)",
        "free space",
    ),
    (
        _os_error(errno.EDQUOT),
        "disk_full",
        1,
        "out/x.json: cannot write (Disk quota exceeded)",
        "free space",
    ),
    (
        _os_error(errno.EACCES),
        "unwritable",
        1,
        "out/x.json: cannot write (Permission denied)",
        "fix it",
    ),
    (
        _os_error(errno.EROFS, None),
        "unwritable",
        1,
        "cannot write (Read-only file system)",
        "fix it",
    ),
    (
        _os_error(errno.ENOTDIR),
        "unwritable",
        1,
        "out/x.json: cannot write (Not a directory)",
        "fix it",
    ),
    (
        io.WriteFailed(Path("c.md"), _os_error(errno.EACCES)),
        "unwritable",
        1,
        "c.md: cannot write (Permission denied)",
        "fix it",
    ),
    (
        io.WriteFailed(Path("c.md"), _os_error(errno.ENOSPC)),
        "disk_full",
        1,
        "c.md: cannot write (No space left on device)",
        "free space",
    ),
    (KeyboardInterrupt(), "interrupted", 130, "the command was stopped", None),
]


@pytest.mark.parametrize(
    ("exc", "kind", "exit_code", "line", "hint"),
    CASES,
    ids=[f"{type(c[0]).__name__}-{c[1]}-{n}" for n, c in enumerate(CASES)],
)
def test_every_failure_has_its_kind_exit_code_line_and_hint(
    exc: BaseException, kind: str, exit_code: int, line: str, hint: str | None
) -> None:
    failure = classify(exc, WHERE)
    assert failure is not None
    assert (failure.kind, failure.exit_code, failure.line, failure.hint) == (
        kind,
        exit_code,
        line,
        hint,
    )
    assert "\n" not in failure.line
    assert failure.worker_lost == (kind in ("crashed", "timeout", "out_of_memory"))


def test_a_failure_it_does_not_know_is_none_a_bug_keeps_its_traceback() -> None:
    assert classify(ValueError("a bug")) is None
    assert classify(OSError("no errno")) is None


def test_who_and_the_timeout_option_are_said_as_given() -> None:
    died = classify(WorkerDied(-signal.SIGKILL, "x"), "", who="the quantizer process")
    assert died is not None
    assert died.line == "the quantizer process was killed by SIGKILL (Killed) (out of memory?)"
    slow = classify(WorkerTimeout("x", 5), "compiling it", timeout_option="--compile-timeout")
    assert slow is not None
    assert slow.line == "no answer within --compile-timeout 5 s compiling it; worker killed"
    assert slow.hint == "raise --compile-timeout"


def test_the_worker_exception_says_how_it_ended() -> None:
    assert str(WorkerDied(-signal.SIGSEGV, "load")) == (
        "the model worker was killed by SIGSEGV (Segmentation fault) during load"
    )


@pytest.mark.parametrize(
    ("exc", "finish_reason", "lost"),
    [
        (WorkerDied(-signal.SIGSEGV, "generate"), "crashed", True),
        (WorkerTimeout("generate", 1), "timeout", True),
        (WorkerError("RuntimeError", "boom", ""), "error", False),
        (WorkerError("UserError", "refused", ""), "error", False),  # one example's: error
    ],
)
def test_an_example_a_worker_did_not_answer_is_recorded_in_the_same_words(
    exc: Exception, finish_reason: str, lost: bool
) -> None:
    failure = example_failure(exc, WHERE)  # type: ignore[arg-type]
    said = classify(exc, WHERE)
    assert said is not None
    assert (failure.finish_reason, failure.message, failure.worker_lost) == (
        finish_reason,
        said.line,
        lost,
    )


# -- a run's ending ------------------------------------------------------------------------
RESUME = "edgebench run --resume runs/r"


@pytest.mark.parametrize(
    ("exc", "hint"),
    [
        (_os_error(errno.ENOSPC), "free space"),
        (_os_error(errno.EACCES), "fix it"),
        (io.WriteFailed(Path("runs/r/manifest.json"), _os_error(errno.EROFS)), "fix it"),
    ],
)
def test_a_refused_write_ends_a_run_with_exit_1_what_is_kept_and_the_resume_hint(
    exc: OSError, hint: str
) -> None:
    ending = run_failure(exc, Path("runs/r"), 4, RESUME)
    assert isinstance(ending, RunFailure) and ending.exit_code == 1
    assert str(ending) == (
        f"could not write to runs/r: {exc.strerror}; 4 completed examples are safe in "
        f"samples.jsonl; {hint}, then continue with `{RESUME}`"
    )


def test_a_refusal_ends_a_run_as_the_users_mistake_and_a_crash_as_a_run_failure() -> None:
    refused = run_failure(WorkerError("UserError", "m.gguf: bad", ""), Path("r"), 0, RESUME)
    assert isinstance(refused, UserError) and str(refused) == "m.gguf: bad"
    mistake = UserError("--limit: 0")
    assert run_failure(mistake, Path("r"), 0, RESUME) is mistake
    failed = run_failure(WorkerError("RuntimeError", "boom", ""), Path("r"), 2, RESUME)
    assert isinstance(failed, RunFailure)
    assert (
        str(failed) == "the model worker failed: RuntimeError: boom; 2 completed examples kept in r"
    )
    died = run_failure(WorkerDied(-signal.SIGSEGV, "load"), Path("r"), 0, RESUME)
    assert str(died) == (
        "the model worker was killed by SIGSEGV (Segmentation fault) during load; "
        "0 completed examples kept in r"
    )


def test_write_failure_is_one_line_with_the_hint_of_its_errno() -> None:
    full = write_failure(_os_error(errno.ENOSPC), "runs", "nothing was written", "run it again")
    assert str(full) == (
        "could not write to runs: No space left on device; nothing was written; free space, "
        "then run it again"
    )
    assert full.exit_code == 1


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS])
def test_write_failed_has_one_kind_exit_1_whatever_the_errno(code: int) -> None:
    failed = io.WriteFailed(Path("c.md"), _os_error(code))
    assert isinstance(failed, RunFailure) and isinstance(failed, OSError)
    assert not isinstance(failed, UserError)
    assert failed.exit_code == 1 and failed.errno == code


def test_the_module_lists_every_kind_with_its_exit_code() -> None:
    """The table in failures.py's docstring is the one the docs point to."""
    doc = failures.__doc__ or ""
    listed = dict(re.findall(r"^(\w+)\s+(\d+)\s", doc, flags=re.MULTILINE))
    assert {kind: int(code) for kind, code in listed.items()} == EXIT_CODES
