"""Waiting on a real process for system tests: until a file it writes has N lines."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        assert proc.poll() is None, "the run ended early"
        time.sleep(0.05)
    pytest.fail(f"{path} never reached {n} lines")
