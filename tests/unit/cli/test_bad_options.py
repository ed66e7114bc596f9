"""Bad options of `edgebench bench`, `consistency` and `run`, in this process: each is
the user's mistake in one line (exit 2, no traceback), before any model is looked for on
the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import cli_error
from tests.helpers.gguf_factory import isolate

BAD_OPTIONS = [
    ("bench", ["--threads", "0"], "--threads: 0 is below the minimum of 1"),
    ("bench", ["--threads", "two"], "--threads: 'two' is not a whole number"),
    ("bench", ["--prompt-tokens", "128,x"], "--prompt-tokens: 'x' is not a whole number"),
    ("bench", ["--gen-tokens", "-5"], "--gen-tokens: -5 is below the minimum of 0"),
    ("bench", ["-p", "0", "-n", "0"], "nothing to measure"),
    ("bench", ["--depth", ","], "--depth: give at least one number"),
    ("bench", ["--model", "/nope/model.gguf"], "/nope/model.gguf"),
    ("consistency", ["--temperatures", "0.2,hot"], "'hot' is not a number"),
    ("consistency", ["--temperatures", "0"], "not above 0"),
    ("consistency", ["--constraint", "none,gbnf"], "one constraint mode"),
    ("consistency", ["--metric-param", "sobench.fuzzy_string_threshold=0.9"], "only sted"),
    ("consistency", ["--metric-param", "sted.lambda=1"], "no parameter 'lambda'"),
    ("run", ["--retime", "sometimes"], "--retime: 'sometimes' is not one of: contended, none"),
    ("run", ["--retime", ""], "--retime: '' is not one of: contended, none"),
    ("run", ["--retime-max", "0"], "'--retime-max': Input should be greater than or equal to 1"),
    ("run", ["--retime-max", "two"], "'--retime-max': Input should be a valid integer"),
]


@pytest.mark.parametrize(("command", "args", "fragment"), BAD_OPTIONS)
def test_bad_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    no_network: list[str],
    command: str,
    args: list[str],
    fragment: str,
) -> None:
    isolate(monkeypatch, tmp_path)
    assert fragment in cli_error(capsys, command, *args)
    assert no_network == []
