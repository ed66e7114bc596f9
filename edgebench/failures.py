"""One failure vocabulary: what a worker or a disk failure is, said the same way by
every command.

A failure has a kind, the exit code a command ends with, one line for the terminal and
a hint (what to do about it). Kinds and exit codes:

crashed        1  a worker process died (a signal: SIGSEGV in native code, SIGILL from a
                  llama.cpp built for another CPU, SIGKILL from the OOM killer; an exit)
timeout        1  a worker did not answer in time and was killed
error          1  the served object raised inside the worker
out_of_memory  1  an isolated call needed more than its memory cap
refused        2  the worker refused what the user gave (a `UserError` there, an
                  unsupported constraint): the user's mistake, as if raised here (one
                  example's refusal is that example's `error`; a run's, its ending)
disk_full      1  a write the system refused for want of space (ENOSPC, EDQUOT)
unwritable     1  any other write the system refused (no permission, a read-only file
                  system, a file where a folder goes): never the user's typing mistake,
                  so a failed write is exit 1 on every path (`io.WriteFailed` too)
interrupted  130  Ctrl-C, SIGTERM, SIGHUP

The worker exceptions live here (isolation.py raises them) so every layer can name them.
"""

from __future__ import annotations

import errno
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from edgebench.errors import RunFailure, UserError

Kind = Literal[
    "crashed",
    "timeout",
    "error",
    "out_of_memory",
    "refused",
    "disk_full",
    "unwritable",
    "interrupted",
]
EXIT_CODES: dict[str, int] = {
    "crashed": 1,
    "timeout": 1,
    "error": 1,
    "out_of_memory": 1,
    "refused": 2,
    "disk_full": 1,
    "unwritable": 1,
    "interrupted": 130,
}
# A disk, or the user's quota on it, that is full.
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
# A disk that refuses writes for another reason: a file system remounted read-only (an
# SD card's errors do that), a failing disk or a storage device pulled out.
DISK_FAULTS = (errno.EROFS, errno.EIO)
# What a worker's exception is called there when it is the user's mistake here.
_REFUSALS = ("UserError", "UnsupportedConstraint")


def describe_exit(exitcode: int | None) -> str:
    """How a child ended, for a one-line message: the signal's name and a likely cause."""
    if exitcode is None:
        return "stopped answering"
    if exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
        except ValueError:
            return f"was killed by signal {-exitcode}"
        hint = exit_hint(exitcode)
        cause = f" ({hint})" if hint else ""
        return f"was killed by {sig.name} ({signal.strsignal(sig)}){cause}"
    return f"exited with code {exitcode}"


def exit_hint(exitcode: int | None) -> str | None:
    """The likely cause of a child's ending, when its signal names one."""
    if exitcode == -signal.SIGILL:
        return "llama-cpp-python built for another CPU? reinstall with ./install.sh"
    if exitcode == -signal.SIGKILL:
        return "out of memory?"
    return None


def ended(who: str, exitcode: int | None, during: str = "") -> str:
    """`who` and how it ended: "the model worker was killed by SIGSEGV (...) during load"."""
    return f"{who} {describe_exit(exitcode)}" + (f" {during}" if during else "")


class WorkerDied(Exception):
    """The worker process ended without answering."""

    def __init__(self, exitcode: int | None, during: str) -> None:
        self.exitcode = exitcode
        self.during = during
        super().__init__(ended("the model worker", exitcode, f"during {during}"))


class WorkerTimeout(Exception):
    """The worker did not answer in time (not an OSError, unlike TimeoutError)."""

    def __init__(self, op: str, timeout: float) -> None:
        self.op = op
        self.timeout = timeout
        super().__init__(f"the model worker did not answer {op} within {timeout:g} s")


class WorkerError(Exception):
    """The served object raised inside the worker; `remote_type` names the exception
    class (a `UserError` there is the user's mistake here too)."""

    def __init__(self, remote_type: str, message: str, remote_traceback: str) -> None:
        self.remote_type = remote_type
        self.remote_traceback = remote_traceback
        super().__init__(message)


class OutOfMemory(Exception):
    """The isolated call needed more than its memory cap."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        super().__init__(f"needed more than {limit_bytes / 2**20:,.0f} MB")


# What a worker's request can end with instead of an answer.
WORKER_FAILURES = (WorkerDied, WorkerTimeout, WorkerError)


@dataclass(frozen=True)
class Failure:
    """One failure as every command says it."""

    kind: Kind
    line: str  # one line, without the hint
    hint: str | None = None  # what to do about it, or None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.kind]

    @property
    def worker_lost(self) -> bool:
        """The worker is dead (or was killed) and must be replaced."""
        return self.kind in ("crashed", "timeout", "out_of_memory")


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


def is_disk_fault(exc: BaseException) -> bool:
    """A refused write that is the disk's doing (full, read-only, failing), not a bug."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL + DISK_FAULTS


def is_user_error(exc: BaseException) -> bool:
    """A `UserError` here, or one raised inside the worker (a refused model file)."""
    return isinstance(exc, UserError) or (
        isinstance(exc, WorkerError) and exc.remote_type in _REFUSALS
    )


def write_hint(exc: OSError) -> str:
    """What to do about a refused write."""
    return "free space" if is_disk_full(exc) else "fix it"


def classify(
    exc: BaseException,
    during: str = "",
    *,
    who: str = "the model worker",
    timeout_option: str = "--timeout",
) -> Failure | None:
    """The failure `exc` is, said as happening `during` ("on example 'x' (arm)",
    "during the warm-up"); None for an exception that is none of these (a bug)."""
    at = f" {during}" if during else ""
    if isinstance(exc, WorkerDied):
        return Failure("crashed", ended(who, exc.exitcode, during), exit_hint(exc.exitcode))
    if isinstance(exc, WorkerTimeout):
        line = f"no answer within {timeout_option} {exc.timeout:g} s{at}; worker killed"
        return Failure("timeout", line, f"raise {timeout_option}")
    if isinstance(exc, WorkerError):  # refused: what ends a run is the user's mistake
        kind: Kind = "refused" if is_user_error(exc) else "error"
        return Failure(kind, f"the backend failed{at}: {exc.remote_type}: {exc}")
    if isinstance(exc, OutOfMemory):
        return Failure("out_of_memory", f"{who}{at} {exc}")
    if isinstance(exc, OSError) and exc.errno is not None:
        where = f"{exc.filename}: " if exc.filename else ""
        line = f"{where}cannot write ({exc.strerror or exc})"
        return Failure("disk_full" if is_disk_full(exc) else "unwritable", line, write_hint(exc))
    if isinstance(exc, KeyboardInterrupt):
        return Failure("interrupted", "the command was stopped")
    return None


def worker_failure(exc: BaseException, during: str, **how: str) -> Failure:
    """`classify` for what a worker request raised (always one of WORKER_FAILURES)."""
    failure = classify(exc, during, **how)
    assert failure is not None, exc
    return failure


def write_failure(exc: OSError, where: Path | str, kept: str, then: str) -> RunFailure:
    """A refused write as the run's one line: where, why, what is kept, what to do."""
    return RunFailure(
        f"could not write to {where}: {exc.strerror or exc}; {kept}; {write_hint(exc)}, then {then}"
    )


def run_failure(exc: BaseException, run_dir: Path, kept: int, resume: str) -> Exception:
    """The one-line error a run ends with: the user's mistake stays a `UserError`; a
    crashed, hung or failing model or a refused write is a `RunFailure` naming the
    folder. `resume` is the command that continues the run."""
    if isinstance(exc, OSError):  # io.WriteFailed too
        safe = f"{kept} completed examples are safe in samples.jsonl"
        return write_failure(exc, run_dir, safe, f"continue with `{resume}`")
    if is_user_error(exc):
        return exc if isinstance(exc, UserError) else UserError(str(exc))
    if isinstance(exc, WorkerError):
        what = f"the model worker failed: {exc.remote_type}: {exc}"
    else:
        what = str(exc) or type(exc).__name__
    return RunFailure(f"{what}; {kept} completed examples kept in {run_dir}")
