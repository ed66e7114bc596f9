"""Markdown escaping of untrusted text: rendered by a CommonMark renderer with raw HTML
allowed (as many renderers do), the text must come back exactly and nothing may act."""

from __future__ import annotations

import pytest

from edgebench.report import markdown as md
from tests.helpers.pages import render_markdown as render
from tests.helpers.report_runs import IMG, REMOTE_IMAGE, SCRIPT, TEMPLATE_INJECTION


@pytest.mark.parametrize(
    "value",
    [
        SCRIPT,
        IMG,
        TEMPLATE_INJECTION,
        REMOTE_IMAGE,
        "# not a heading",
        "1. not a list",
        "*not em* _nor this_ ~~nor~~ [link](http://x) `code` \\ $math$ &amp; &#60;",
    ],
)
def test_text_shows_exactly_and_makes_no_markup(value: str) -> None:
    page = render(md.text(value))
    assert page.text.strip("\n") == value
    assert page.names() <= {"p"}


def test_line_breaks_become_br_and_stay_one_paragraph() -> None:
    page = render(md.text(f"one\n{SCRIPT}\n\n- three"))
    assert page.text.strip("\n") == f"one{SCRIPT}- three"
    assert [t for t, _ in page.tags] == ["p", "br", "br", "br"]


def test_table_cells_keep_pipes_and_newlines_inside_their_row() -> None:
    rows = [["a|b\nc", 1.5], [f"{IMG} | {SCRIPT}", None]]
    page = render(md.table(["name", "value"], rows))
    assert [t for t, _ in page.tags].count("tr") == 3
    assert [t for t, _ in page.tags].count("td") == 4
    assert "a|bc" in page.text and f"{IMG} | {SCRIPT}" in page.text
    assert page.names() <= {"table", "thead", "tbody", "tr", "th", "td", "br"}


@pytest.mark.parametrize("body", ["plain", "```\ninside\n```", "a ```` b ````` c", "`", "~~~"])
def test_code_block_fence_outlasts_any_backtick_run(body: str) -> None:
    page = render(md.code_block(body) + "\n\nafter")
    assert page.text == f"{body}\n\nafter\n"
    assert [t for t, _ in page.tags] == ["pre", "code", "p"]


def test_inline_code_keeps_backticks() -> None:
    page = render(md.inline_code("run `x` | y"))
    assert page.text.strip("\n") == "run `x` | y"
