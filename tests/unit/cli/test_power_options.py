"""`run`'s power options: each mistake is one line (exit 2, no traceback), before any
dataset or model is loaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import cli_error
from tests.helpers.gguf_factory import isolate


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--power-log", "missing.csv"], "--power-log: no such file: missing.csv"),
        (["--power-log", "bad.csv"], "bad.csv:2"),
        (["--idle-baseline", "-1"], "'--idle-baseline'"),
        (["--idle-baseline", "ten"], "'--idle-baseline'"),
        (["--idle-baseline", "nan"], "'--idle-baseline'"),
        (["--idle-baseline", "1e9"], "--idle-baseline: 1e+09 s is more than the 3600 s"),
        (["--idle-baseline", "inf"], "--idle-baseline: inf is not a number of seconds"),
        (["--power-command", "  "], "--power-command: empty command"),
        (["--power-command", "meter", "--power-log", "good.csv"], "not both"),
        (["--power-log", "meter.fifo"], "--power-log meter.fifo: not a regular file (a FIFO"),
        (["--power-log", "zero.csv"], "--power-log zero.csv: not a regular file"),
        (["--power-log", "."], "--power-log .: not a regular file"),
        (
            ["--power-log", "long.csv"],
            "long.csv:2: watts 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'",
        ),
    ],
)
def test_bad_power_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    no_network: list[str],
    args: list[str],
    fragment: str,
) -> None:
    isolate(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.csv").write_text("time,watts\n1764130000,not-watts\n")
    (tmp_path / "good.csv").write_text("time,watts\n1764130000,4.5\n")
    (tmp_path / "long.csv").write_text("time,watts\n1764130000," + "x" * 4000 + "\n")
    os.mkfifo(tmp_path / "meter.fifo")  # before: "no such file" for what is there
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    error = cli_error(capsys, "run", "--limit", "1", *args)
    assert fragment in error
    assert not (tmp_path / "runs").exists()
    assert no_network == []
