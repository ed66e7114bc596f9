"""Running the CLI in-process (also `run` on a one-row dataset) and in a process of its own,
and checking that a mistake ends in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edgebench.cli.app import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """`edgebench ARGS` in this process: the exit code and what went to stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    err = capsys.readouterr().err
    return int(exit_info.value.code or 0), err


def stdout_of(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`edgebench ARGS` in this process, which must succeed: what went to stdout."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    assert not exit_info.value.code, captured.err
    return captured.out


def assert_one_line_error(code: int, err: str, *fragments: str, exit_code: int = 2) -> None:
    """Exit `exit_code` (2: the user's mistake) with one line, no traceback, naming
    every fragment."""
    assert code == exit_code, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in err


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`edgebench ARGS` in this process ends with the user's mistake (exit 2) in one line,
    no traceback: that line."""
    code, err = run_cli(capsys, *args)
    assert_one_line_error(code, err)
    return err.strip()


def run_one_row(
    capsys: pytest.CaptureFixture[str], folder: Path, model: Path, prompt: str
) -> tuple[int, str, Path]:
    """`edgebench run --model MODEL` in this process on a one-row EdgeJSON dataset that it
    writes into `folder` (prompt `prompt`, any object answers it): the exit code, what went
    to stderr, and the run folder the run was given (`folder/run`)."""
    (folder / "schemas" / "simple").mkdir(parents=True)
    (folder / "schemas" / "simple" / "s.json").write_text('{"type": "object"}')
    row = {"id": "r1", "schema_id": "s", "prompt": prompt, "expected_output": {}}
    (folder / "data.jsonl").write_text(json.dumps(row) + "\n")
    out = folder / "run"
    dataset = str(folder / "data.jsonl")
    code, err = run_cli(
        capsys, "run", "--model", str(model), "--dataset", dataset, "--out", str(out)
    )
    return code, err, out


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
