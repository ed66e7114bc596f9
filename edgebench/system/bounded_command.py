"""Run a short command that nothing may trust: no shell, its own process group, a
deadline and a cap on what it prints.

A meter's reader or `vcgencmd` is polled once a second by the timeline: one that hangs,
prints without end, or forks a child that keeps its output open must cost that reading,
never the run. So the command starts in a session of its own, its output is read with a
deadline (at most `limit` bytes of each stream kept), and when it ends (or the deadline
passes) its whole process group is killed: nothing it started outlives the poll.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

OUTPUT_LIMIT = 64 * 1024  # bytes of stdout (and of stderr) kept; the rest is read and dropped
_CHUNK = 65536
_POLL_S = 0.01


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


def run_bounded(argv: list[str], timeout: float, limit: int = OUTPUT_LIMIT) -> Finished:
    """Run `argv` (no shell) to its end within `timeout` seconds. OSError when it cannot
    start; subprocess.TimeoutExpired when it (or a child holding its output) outlives the
    deadline. Either way its process group is gone when this returns."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    kept = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as selector:
            for fd in kept:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout)
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk:
                        selector.unregister(key.fd)
                        continue
                    buffer = kept[key.fd]
                    buffer += chunk[: max(limit - len(buffer), 0)]
        # both streams closed: wait for the exit without reaping it, so the process group
        # id stays this command's until the group is killed below
        while not _exited(proc.pid):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(argv, timeout)
            time.sleep(_POLL_S)
    finally:
        _end_group(proc)
    out, err = kept.values()
    return Finished(proc.returncode, bytes(out), bytes(err))


def _exited(pid: int) -> bool:
    flags = os.WEXITED | os.WNOWAIT | os.WNOHANG
    try:
        return os.waitid(os.P_PID, pid, flags) is not None
    except ChildProcessError:
        return True


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of the command's process group, then reap the command."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
