"""Unit tests run in this process: one that starts a worker process, edgebench or Python
in a subprocess, or a browser belongs in tests/system, and fails here. (Small system
tools the code asks on the way, `git rev-parse` for the manifest, `uname` behind
`platform`, are not what this guards.)"""

from __future__ import annotations

import multiprocessing.context
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.worker import BackendWorker
from edgebench.runner import engine
from tests.helpers.cpu_times import CLEAN, always

_popen = subprocess.Popen.__init__
_HEAVY = ("python", "chromium", "chrome", "edgebench")


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("a unit test started a process: move it to tests/system")


def _guarded_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
    program = args[0] if isinstance(args, list | tuple) and args else args
    name = Path(str(program)).name
    if str(program) == sys.executable or name.startswith(_HEAVY):
        _refuse()
    _popen(self, args, *rest, **kwargs)


@pytest.fixture(autouse=True)
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", _refuse)
    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", _refuse)
    monkeypatch.setattr(subprocess.Popen, "__init__", _guarded_popen)


@pytest.fixture(autouse=True, scope="session")
def quiet_machine() -> Iterator[None]:
    """Runs read a fake, quiet machine's CPU times: the test machine's own load would
    flag examples as contended and re-time them (tests of contention pass their own).
    Session-wide, so the runs that module and session fixtures make are quiet too."""
    real, engine.CPU_TIMES = engine.CPU_TIMES, always(CLEAN)
    yield
    engine.CPU_TIMES = real


@pytest.fixture
def workers_started(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record (and refuse) any worker process start: native code must not run. Recorded,
    not only raised, so an error handler cannot hide it."""
    started: list[object] = []

    def refuse(self: BackendWorker, *args: object, **kwargs: object) -> None:
        started.append(args)
        raise AssertionError("a worker (native code) was started for a broken model file")

    monkeypatch.setattr(BackendWorker, "__init__", refuse)
    return started
