"""Untrusted text in Markdown: model output, GGUF metadata (`general.name`, the chat
template), dataset text, even file paths. Each helper returns Markdown that shows the
text exactly as it is and lets none of it act as markup: no HTML, no links or remote
images, no table cell breaking out of its row, no code fence closing early."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

_BACKTICK_RUNS = re.compile(r"`+")
# CommonMark lets a backslash escape any ASCII punctuation. These characters can open or
# close inline markup anywhere (emphasis, code, links and images, strikethrough, tables,
# math on the Hub); `<`, `>` and `&` become entities so no renderer sees a tag or an entity.
_INLINE = set("\\`*_[]!|~$")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
# What opens a block at the start of a line: a heading, list item, quote or rule.
_BLOCK_START = re.compile(r"^(\s*)(\d{1,9}(?=[.)](?:\s|$))|)([#+\-=.)])")


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICK_RUNS.findall(text)), default=0)


def code_block(text: str, language: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside, so the
    text cannot close it; inside a code block nothing is markup."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{language}\n{body}{fence}"


def inline_code(text: str) -> str:
    """A code span for a short string (a command, a hash), on one line."""
    one_line = " ".join(text.splitlines())
    fence = "`" * (_longest_backtick_run(one_line) + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") or not one_line else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


# Where a renderer would find a link in plain text (GFM autolinks, linkify): the colon of
# `https:` or `mailto:`, the second slash of `//host`, and the dot of `www.` or
# `evil.example` (a dot between a letter or digit and a letter). A backslash before it
# shows the same character but splits the text where autolinkers look, so none of them
# sees a URL, a domain or an e-mail address.
_LINK_PUNCT = re.compile(r"(?<=\w)(?::(?=\S)|\.(?=[^\W\d_]))|(?<=/)/")


def _escape_line(line: str) -> str:
    breaks = {match.start() for match in _LINK_PUNCT.finditer(line)}
    escaped = "".join(
        _ENTITIES.get(ch) or (f"\\{ch}" if ch in _INLINE or i in breaks else ch)
        for i, ch in enumerate(line)
    )
    return _BLOCK_START.sub(r"\1\2\\\3", escaped, count=1)


def link_target(name: str) -> str:
    """A file name as a link destination: percent-encoded, so a space, a parenthesis or
    a `#` in the name still links the file next to the card."""
    return quote(name, safe="")


def text(value: Any) -> str:
    """Plain text in running Markdown: every markup character escaped, line breaks kept
    as `<br>` (the only tag in the result, ours) so the text stays one block."""
    return "<br>".join(_escape_line(line) for line in str(value).splitlines())


def cell(value: Any) -> str:
    """One table cell: numbers as they are, None as a dash, anything else escaped as
    text, `|` included, with line breaks as `<br>` so the row stays one line."""
    if value is None:
        return "-"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return text(value) or " "


def table(headers: list[str], rows: list[list[Any]], align_right_from: int = 1) -> str:
    """A GitHub-flavoured Markdown table; every header and cell goes through `cell`."""
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |"]
    rule = ["---:" if i >= align_right_from else "---" for i in range(len(headers))]
    lines.append("| " + " | ".join(rule) + " |")
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
