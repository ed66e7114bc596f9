"""Every `--help` shows its texts as written (issue 37): brackets are kept (Typer reads
help as Rich markup, which ate `[parquet]` from `pip install 'edgebench[parquet]'`), a
required argument is `RUN_DIR...` in the usage line (not `{RUN_DIR}...`), and a default
the help text states is not said again by Typer's `[default: ...]`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from edgebench.cli.app import WORKFLOW, app
from edgebench.cli.command_tree import build
from tests.helpers.cli import stdout_of


def commands(settled: bool = True) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(command path, click command) of every command that runs (groups left out): as
    `edgebench` shows them, or (not `settled`) with the texts the source wrote."""

    def under(path: tuple[str, ...], command: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
        children = getattr(command, "commands", {})
        if not children:
            yield path, command
        for name, child in children.items():
            yield from under((*path, name), child)

    yield from under((), build(app, WORKFLOW) if settled else typer.main.get_command(app))


COMMANDS = sorted(path for path, _ in commands())


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per help text: nothing wrapped


def rows(help_text: str) -> list[str]:
    """The help's parameter rows, each with its continuation lines joined."""
    found: list[str] = []
    for line in help_text.splitlines():
        cell = line.strip().strip("│").strip()
        if re.match(r"^(\*\s+)?-|^(\*\s+)?[A-Z_]+\b", cell) and line.lstrip().startswith("│"):
            found.append(cell)
        elif found and line.lstrip().startswith("│") and cell:
            found[-1] += " " + cell
    return found


def raw_texts(path: tuple[str, ...]) -> list[str]:
    """A command's help texts as the source writes them."""
    command = dict(commands(settled=False))[path]
    return [command.help or "", *(param.help or "" for param in command.params)]


# `edgebench[parquet]` and the like: an extra in brackets, the text Rich markup ate.
_BRACKETED = re.compile(r"\w+\[[\w,]+\]")


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_brackets_in_help_texts_are_shown(path: tuple[str, ...], capsys: Any) -> None:
    bracketed = {m for text in raw_texts(path) for m in _BRACKETED.findall(text)}
    shown = " ".join(stdout_of(capsys, *path, "--help").split())
    assert not [text for text in bracketed if text not in shown]


def test_the_parquet_extra_is_named_in_db_export_help(capsys: Any) -> None:
    assert "pip install 'edgebench[parquet]'" in stdout_of(capsys, "db", "export", "--help")


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_usage_lines_show_arguments_as_click_does(path: tuple[str, ...], capsys: Any) -> None:
    usage = next(
        line for line in stdout_of(capsys, *path, "--help").splitlines() if "Usage:" in line
    )
    assert "{" not in usage and "}" not in usage


def test_a_required_list_argument_is_name_dots(capsys: Any) -> None:
    for path in (("compare",), ("db", "ingest"), ("report",)):
        usage = stdout_of(capsys, *path, "--help")
        assert f"Usage: edgebench {' '.join(path)} [OPTIONS] RUN_DIR..." in usage


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_a_default_is_said_once(path: tuple[str, ...], capsys: Any) -> None:
    """A help that says its default ("(default: edgebench.db here)") has no `[default:]`."""
    twice = [
        row
        for row in rows(stdout_of(capsys, *path, "--help"))
        if re.search(r"(?<!\[)\bdefault:", row, re.I) and "[default:" in row
    ]
    assert not twice


def test_db_ingest_states_its_default_once(capsys: Any) -> None:
    row = next(r for r in rows(stdout_of(capsys, "db", "ingest", "--help")) if "--db" in r)
    assert row.lower().count("default") == 1, row
