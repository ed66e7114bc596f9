"""Dataset files for the reader tests: JSONL lines, and the one line `edgebench run` and
`edgebench data validate` print for a file they cannot read (both read it with the same
reader, so both must print the same line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import cli_error

# Given so that `run` can never reach a model download: every input here fails to load
# first, and a file that loaded by mistake would fail on this instead.
NO_MODEL = "/nonexistent/model.gguf"
# 100,000 levels of nesting: far past any reader's limit.
DEEP = b"[" * 100_000 + b"]" * 100_000


def lines(rows: list[dict]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def append(path: Path, line: bytes) -> Path:
    with path.open("ab") as handle:
        handle.write(line + b"\n")
    return path


def same_error(
    capsys: pytest.CaptureFixture[str], run_args: list[str], validate_args: list[str]
) -> str:
    """`run` and `data validate` on one file: the same line, returned once."""
    from_run = cli_error(capsys, "run", "--model", NO_MODEL, *run_args)
    from_validate = cli_error(capsys, "data", "validate", *validate_args)
    assert from_run == from_validate
    return from_run


def dataset_error(capsys: pytest.CaptureFixture[str], dataset: Path, *args: str) -> str:
    """`run` and `data validate` on `dataset` (`--dataset DATASET` and `args` to both):
    the same line, returned once."""
    both = ["--dataset", str(dataset), *args]
    return same_error(capsys, both, both)


def assert_line_refused(
    capsys: pytest.CaptureFixture[str], dataset: Path, line: bytes, message: str, *args: str
) -> None:
    """`dataset` with `line` appended: `run` and `data validate` (given `args`) refuse it
    with the same line, naming the file then saying `message`."""
    append(dataset, line)
    assert f"error: {dataset}{message}" in dataset_error(capsys, dataset, *args)
