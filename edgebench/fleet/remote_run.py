"""Run a command on a fleet host so that it ends with the connection that started it.

`python remote_run.py COMMAND...` (stdlib only: the playbook runs it on the host). The
command runs in a session of its own; it is stopped (SIGTERM to its process group, SIGKILL
10 s later) when this wrapper gets SIGHUP, SIGTERM or SIGINT (the ssh connection's
terminal hanging up), when the process that started it (Ansible's module) goes away, or
when this wrapper itself is killed (the command's parent-death signal). So nothing of a
plan run is left on the device after a dropped connection; the next `fleet run` resumes
it. The exit code is the command's (128 + signal when it was stopped).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1
_GRACE_SECONDS = 10.0


def _die_with_parent() -> None:
    """In the child: SIGTERM when this wrapper dies, however it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop(child: subprocess.Popen[bytes], code: int) -> int:
    for sig, wait in ((signal.SIGTERM, _GRACE_SECONDS), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            break
        try:
            child.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    return code


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: remote_run.py COMMAND...", file=sys.stderr)
        return 2
    _die_with_parent()  # this wrapper too: gone with the module that started it
    parent = os.getppid()
    stopped: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stopped.append(signum)

    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    child = subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent)
    while True:
        try:
            return child.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
        if stopped:
            return _stop(child, 128 + stopped[0])
        if os.getppid() != parent:
            return _stop(child, 128 + signal.SIGHUP)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
