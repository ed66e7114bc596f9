"""Unit tests run in this process: one that starts a worker process, edgebench or Python
in a subprocess, or a browser belongs in tests/system, and fails here. (Small system
tools the code asks on the way, `git rev-parse` for the manifest, `uname` behind
`platform`, are not what this guards.)"""

from __future__ import annotations

import multiprocessing.context
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
