"""The command outputs the docs show are what the commands print today: every block
marked `<!-- output: CMD -->` equals CMD's output over the stored example run
(scripts/docs_outputs.py regenerates them; here they run in this process)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgebench.cli.app import main
from tests.helpers.scripts import load_script

ROOT = Path(__file__).parents[2]
docs_outputs = load_script("scripts/docs_outputs.py")

MARKED = [page for page in docs_outputs.pages() if docs_outputs.MARK.search(page.read_text())]
# Commands that build a whole run, database or dataset (about 1-2 s each on 2 cores): their
# blocks are checked in the slow tier (`python -m pytest --all`), the others in the fast one;
# `python scripts/docs_outputs.py --check` checks them all.
SLOW = ("edgebench score", "edgebench db ingest", "edgebench data generate")


def blocks(slow: bool) -> list[tuple[Path, re.Match[str]]]:
    found = []
    for page in MARKED:
        for match in docs_outputs.MARK.finditer(page.read_text(encoding="utf-8")):
            if any(command in match["cmd"] for command in SLOW) == slow:
                found.append((page, match))
    return found


def where(block: tuple[Path, re.Match[str]]) -> str:
    page, match = block
    line = match.string.count("\n", 0, match.start()) + 1
    return f"{page.relative_to(ROOT).as_posix()}:{line}"


def test_the_readme_and_the_quick_start_show_generated_outputs() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in MARKED}
    assert {"README.md", "docs/start/quick-start.md"} <= names


def check_current(
    block: tuple[Path, re.Match[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The block equals what its command prints today, the command run in this process."""
    monkeypatch.chdir(ROOT)

    def in_process(args: list[str], env: dict[str, str]) -> str:
        for name, value in {"NO_COLOR": "1", "TERM": "dumb", **env}.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(SystemExit):
            main(args)
        captured = capsys.readouterr()
        return captured.out + captured.err

    _, match = block
    assert docs_outputs.block(match, in_process) == match[0], (
        f"{where(block)}: an output is out of date: python scripts/docs_outputs.py"
    )


@pytest.mark.parametrize("block", blocks(slow=False), ids=where)
def test_every_generated_output_is_current(
    block: tuple[Path, re.Match[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_current(block, capsys, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("block", blocks(slow=True), ids=where)
def test_every_generated_output_of_a_slow_command_is_current(
    block: tuple[Path, re.Match[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_current(block, capsys, monkeypatch)


def test_a_marked_block_is_replaced_and_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(args: list[str], env: dict[str, str]) -> str:
        return f"{' '.join(args)} at {env['COLUMNS']}\nline 2\nline 3\n"

    text = "<!-- output: COLUMNS=80 edgebench compare runs | head -2 -->\n```\nold\n```\n"
    assert docs_outputs.regenerate(text, fake) == (
        "<!-- output: COLUMNS=80 edgebench compare runs | head -2 -->\n"
        "```\n$ COLUMNS=80 edgebench compare runs\ncompare runs at 80\nline 2\n...\n```\n"
    )


def test_a_command_may_keep_a_span_of_its_lines() -> None:
    def fake(args: list[str], env: dict[str, str]) -> str:
        return "".join(f"line {n}\n" for n in range(1, 6))

    assert docs_outputs.output_of("edgebench score run | sed -n 2,3p", fake) == (
        "$ edgebench score run\n...\nline 2\nline 3\n..."
    )


def test_a_file_block_shows_the_file_and_keeps_its_language() -> None:
    text = "<!-- file: docs/examples/plans/plan.toml -->\n```toml\nold\n```\n"
    plan = (ROOT / "docs" / "examples" / "plans" / "plan.toml").read_text(encoding="utf-8")
    assert docs_outputs.regenerate(text) == (
        f"<!-- file: docs/examples/plans/plan.toml -->\n```toml\n{plan.rstrip()}\n```\n"
    )


def test_a_copied_run_is_what_the_command_reads() -> None:
    def fake(args: list[str], env: dict[str, str]) -> str:
        return f"{args[1]} holds {sorted(p.name for p in Path(args[1]).iterdir())[0]}\n"

    command = "cp -r docs/examples/runs/none-vs-mask $TMP/run && edgebench score $TMP/run"
    assert docs_outputs.output_of(command, fake) == (
        "$ cp -r docs/examples/runs/none-vs-mask $TMP/run\n"
        "$ edgebench score $TMP/run\n$TMP/run holds manifest.json"
    )


def test_a_query_prints_as_the_sqlite3_shell_does(tmp_path: Path) -> None:
    import sqlite3

    with sqlite3.connect(tmp_path / "r.db") as conn:
        conn.execute("CREATE TABLE t (name TEXT, rss REAL, n INT)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [("vm", 2500.0, None), (None, 1e20, 3)])
    conn.close()
    (tmp_path / "q.sql").write_text("SELECT name, rss AS peak_rss, n FROM t ORDER BY rss;\n")
    command = f"sqlite3 -header -column {tmp_path}/r.db < {tmp_path}/q.sql"
    assert docs_outputs.output_of(command).splitlines()[1:] == [
        "name  peak_rss  n",
        "----  --------  -",
        "vm    2500.0",
        "      1.0e+20   3",
    ]


def test_a_bad_query_is_one_line_naming_its_file(tmp_path: Path) -> None:
    import sqlite3

    sqlite3.connect(tmp_path / "r.db").close()
    (tmp_path / "q.sql").write_text("SELECT x FROM nowhere;\n")
    with pytest.raises(SystemExit, match=r"q\.sql: no such table: nowhere$"):
        docs_outputs.output_of(f"sqlite3 -header -column {tmp_path}/r.db < {tmp_path}/q.sql")
