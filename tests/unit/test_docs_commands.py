"""Every `edgebench ...` command the docs show is one the CLI takes: each command line in
the fenced code blocks of README.md and docs/**/*.md is resolved against the real command
tree and its options parsed, without running it. A renamed option or command, or a
missing argument, fails here naming the file and line."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer._click import Context
from typer._click.exceptions import ClickException
from typer.exceptions import Exit

from edgebench.cli.app import WORKFLOW, app
from edgebench.cli.command_tree import build

ROOT = Path(__file__).parents[2]
# Blocks of shell commands; a block of another kind (or none) counts only the lines after
# a `$ ` prompt (a command and its output).
SHELL = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Where one command ends in a shell line.
SEPARATORS = {"&&", "||", ";", "|", "&"}
REDIRECT = re.compile(r"^\d*[<>]")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def shell_blocks(text: str) -> Iterator[tuple[bool, list[tuple[int, str]]]]:
    """Whether each fenced block is a shell block, and its lines (number, text); fences
    nested in lists too."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, lang = match.groups()
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(
                (i + 1, lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            )
            i += 1
        i += 1
        yield lang.lower() in SHELL, body


def command_lines(
    block: list[tuple[int, str]], shell: bool = True
) -> Iterator[tuple[int, str, bool]]:
    """Each shell line of a block, `\\` continuations joined; in a block that shows
    output, or is no shell block, only the lines after a `$ ` prompt."""
    prompted = not shell or any(line.startswith("$ ") for _, line in block)
    pending: tuple[int, str] | None = None
    after = {number: line for number, line in block}
    for number, line in block:
        shown = after.get(number + 1, "")  # the line under the command's last line
        if pending is not None:
            start, text = pending
            line = f"{text} {line.strip()}"
            number = start
            pending = None
        elif prompted:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line.rstrip().endswith("\\"):
            pending = (number, line.rstrip()[:-1])
            continue
        yield number, line, shown.startswith("error: edgebench") and "(see edgebench" in shown


def edgebench_argvs(line: str) -> Iterator[list[str]]:
    """The argument lists of every edgebench command in one shell line: comments,
    `VAR=value` prefixes, redirections, pipes and `&&` chains taken apart."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: not a shell line
        return
    command: list[str] = []
    for word in [*words, ";"]:
        if word not in SEPARATORS:
            command.append(word)
            continue
        while command and ASSIGNMENT.match(command[0]):
            command.pop(0)
        if command[:1] == ["nohup"]:
            command.pop(0)
        if command[:3] == ["python", "-m", "edgebench"]:
            command = ["edgebench", *command[3:]]
        if command[:1] == ["edgebench"]:
            yield _without_redirections(command[1:])
        command = []


def _without_redirections(words: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif REDIRECT.match(word):
            skip = word in {">", ">>", "<", "2>", "1>"}  # the file is the next word
        elif word not in {"...", "…"}:  # "the rest of the command" in prose
            kept.append(word)
    return kept


def documented_commands() -> list[tuple[str, list[str], bool]]:
    """(file:line, argv, whether the docs show it refused) of every documented command."""
    found = []
    for page in pages():
        where = page.relative_to(ROOT)
        for shell, block in shell_blocks(page.read_text(encoding="utf-8")):
            for number, line, refused in command_lines(block, shell):
                for argv in edgebench_argvs(line):
                    found.append((f"{where}:{number}", argv, refused))
    return found


ROOT_COMMAND = build(app, WORKFLOW)


def parse(argv: list[str]) -> None:
    """Resolve `edgebench ARGV` down the command tree and parse its options as click
    would before running it (callbacks of eager options such as --help included)."""
    command, parent, words, name = ROOT_COMMAND, None, list(argv), "edgebench"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(Exit):
        while True:
            children = getattr(command, "commands", None)
            if children is None:
                command.make_context(name, words, parent=parent)
                return
            ctx = Context(command, info_name=name, parent=parent)
            options = []
            while words and words[0].startswith("-"):
                options.append(words.pop(0))
            if options or not words:
                command.make_context(name, [*options, *(["--help"] if not words else [])])
                return
            if words[0] not in children:
                raise AssertionError(f"no command {words[0]!r} under {ctx.command_path}")
            command, parent, name = children[words[0]], ctx, words.pop(0)


COMMANDS = documented_commands()


def test_the_docs_show_many_commands() -> None:
    assert len(COMMANDS) > 200
    assert any(where.startswith("README.md") for where, _, _ in COMMANDS)
    assert any(refused for _, _, refused in COMMANDS)


def test_every_documented_command_parses() -> None:
    failures = []
    for where, argv, refused in COMMANDS:
        try:
            parse(argv)
        except (ClickException, AssertionError) as exc:
            message = exc.format_message() if isinstance(exc, ClickException) else str(exc)
            if not refused:
                failures.append(f"{where}: edgebench {shlex.join(argv)}: {message}")
        else:
            if refused:
                failures.append(f"{where}: edgebench {shlex.join(argv)}: shown refused, parses")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("line", "argvs"),
    [
        ("edgebench run --limit 20   # a comment", [["run", "--limit", "20"]]),
        ("COLUMNS=80 edgebench compare runs | head", [["compare", "runs"]]),
        (
            "./install.sh dev && edgebench models pull x && python -m pytest",
            [["models", "pull", "x"]],
        ),
        ("edgebench bench -f md > speed.md", [["bench", "-f", "md"]]),
        ("python -m edgebench score RUN_DIR", [["score", "RUN_DIR"]]),
        ("git clone https://example.org/x", []),
    ],
)
def test_command_lines_are_taken_apart_as_a_shell_would(line: str, argvs: list) -> None:
    assert list(edgebench_argvs(line)) == argvs


def test_continuations_and_prompts() -> None:
    block = [(1, "$ edgebench run --limit 2 \\"), (2, "    --threads 2"), (3, "output line")]
    assert list(command_lines(block)) == [(1, "edgebench run --limit 2  --threads 2", False)]
    shown = [
        (1, "$ edgebench run -n 0"),
        (2, "error: edgebench run: bad (see edgebench run --help)"),
    ]
    assert list(command_lines(shown)) == [(1, "edgebench run -n 0", True)]


@pytest.mark.parametrize(
    "argv",
    [["run", "--no-such-option"], ["modles", "list"], ["models", "pull"], ["run", "--limit"]],
)
def test_a_wrong_command_fails(argv: list[str]) -> None:
    with pytest.raises((ClickException, AssertionError)):
        parse(argv)


def github_slug(heading: str) -> str:
    """A heading's id as GitHub (and the site's slugify) make it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_links_resolve() -> None:
    """The site's build checks the pages' links; the README is outside it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path
        if not file.exists():
            broken.append(target)
        elif anchor:
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
            if anchor not in {github_slug(h) for h in headings}:
                broken.append(target)
    assert not broken, broken
