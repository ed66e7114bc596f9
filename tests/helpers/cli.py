"""Running the CLI in-process and checking that a mistake ends in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgebench.cli.app import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`edgebench ARGS` in this process: the exit code and what went to stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    err = capsys.readouterr().err
    return int(exit_info.value.code or 0), err


def assert_one_line_error(code: int, err: str, *fragments: str, exit_code: int = 2) -> None:
    """Exit `exit_code` (2: the user's mistake) with one line, no traceback, naming
    every fragment."""
    assert code == exit_code, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in err


def edgebench_process(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python -m edgebench ARGS` in a process of its own (real models, real signals)."""
    return subprocess.run(
        [sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, timeout=timeout
    )


def edgebench_ok(*args: str) -> subprocess.CompletedProcess[str]:
    """`edgebench_process`, which must succeed."""
    done = edgebench_process(*args)
    assert done.returncode == 0, done.stderr
    return done
