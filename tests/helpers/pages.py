"""Reading rendered reports back: the tags, attributes and text of HTML (`Page`), the
text inside each element by class and the page's own script and style (`Elements`),
Markdown rendered the way many renderers do, raw HTML allowed (`render_markdown`), and
the HTML leaderboard as rows of sort key -> cell (`leaderboard_rows`)."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from markdown_it import MarkdownIt


class Page(HTMLParser):
    """Tags, attributes and text of rendered HTML."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text += data

    def names(self) -> set[str]:
        return {tag for tag, _ in self.tags}


class Elements(Page):
    """Also the text inside each <pre> with a given class, and the raw text of the
    page's <script> and <style>."""

    def __init__(self, html: str) -> None:
        self.stack: list[str] = []
        self.by_class: dict[str, list[str]] = {}
        self.raw_script = ""
        self.raw_style = ""
        super().__init__(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        super().handle_starttag(tag, attrs)
        if tag in ("meta", "img", "br", "input", "link"):
            return  # void elements have no end tag
        css = dict(attrs).get("class") or ""
        self.stack.append(f"<{tag}>" if tag in ("script", "style") else css)
        if tag == "pre":
            self.by_class.setdefault(css, []).append("")

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        super().handle_data(data)
        inside = self.stack[-1] if self.stack else ""
        if inside == "<script>":
            self.raw_script += data
        elif inside == "<style>":
            self.raw_style += data
        elif inside in self.by_class:
            self.by_class[inside][-1] += data


def render_markdown(markdown: str) -> Page:
    """CommonMark with tables and raw HTML allowed, as many Markdown renderers do."""
    return Page(MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown))


def leaderboard_rows(html: str) -> list[dict[str, tuple[str, str]]]:
    """The HTML leaderboard's rows in page order: column sort key (`data-key`) ->
    (shown text, the `data-value` the column sorts by)."""
    board = html.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
    keys = [unescape(k) for k in re.findall(r'<th data-key="([^"]*)"', board)]
    rows = []
    for row in re.findall(r'<tr class="leaderboard-row">(.*?)</tr>', board, re.S):
        cells = re.findall(r'<td[^>]*data-value="([^"]*)"[^>]*>(.*?)</td>', row, re.S)
        pairs = zip(keys, cells, strict=True)
        rows.append({key: (_shown(text), unescape(value)) for key, (value, text) in pairs})
    return rows


def _shown(cell_html: str) -> str:
    """A cell's text as read: tags gone (a figure's interval sits in a span under it)."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", cell_html)).split())


def table_cells(html: str, marker: str) -> tuple[list[str], list[list[str]]]:
    """The first table at or after `marker` (an id or class attribute, say): its header
    labels and each body row's cells as read (a row-group label row is one cell)."""
    table = html.split(marker, 1)[1].split("</table>", 1)[0]
    head, _, body = table.partition("</thead>")
    headers = [_shown(th) for th in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]
    rows = [
        [_shown(cell) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]
    return headers, rows
