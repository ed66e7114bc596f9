"""`run`'s power options: each mistake is one line (exit 2, no traceback), before any
dataset or model is loaded."""

from __future__ import annotations

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
        (["--power-command", "  "], "--power-command: empty command"),
        (["--power-command", "meter", "--power-log", "good.csv"], "not both"),
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
    error = cli_error(capsys, "run", "--limit", "1", *args)
    assert fragment in error
    assert not (tmp_path / "runs").exists()
    assert no_network == []
