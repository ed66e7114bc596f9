"""The CLI reference page is the command tree's own: the committed docs/reference/cli.md
equals what `python -m edgebench.cli.reference` writes, and it names every command."""

from __future__ import annotations

from pathlib import Path

from edgebench.cli.app import WORKFLOW, app
from edgebench.cli.command_tree import build, walk
from edgebench.cli.reference import page

PAGE = Path(__file__).parents[3] / "docs" / "reference" / "cli.md"


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text(encoding="utf-8") == page(), (
        "docs/reference/cli.md is out of date: "
        "python -m edgebench.cli.reference > docs/reference/cli.md"
    )


def test_every_command_and_option_has_its_place() -> None:
    text = page()
    root = build(app, WORKFLOW)
    for command in walk(root):
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert f"`{', '.join(param.opts)}" in text, param.opts
    for group in ("models", "data", "db", "plan", "fleet"):
        for name in root.commands[group].commands:
            assert f"`edgebench {group} {name}`" in text
    assert "`edgebench run`" in text and "`edgebench bench`" in text
