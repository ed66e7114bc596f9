"""The rich tables inside what a command renders (groups and fitted tables unwrapped),
their cells as plain text, and the check that a printed text shows each cell whole."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table

from edgebench.report.fit import Fitted, label_columns


def tables_in(renderable: Any) -> list[Table]:
    """Every Table in `renderable`, in order: groups and fitted tables opened."""
    if isinstance(renderable, Table):
        return [renderable]
    if isinstance(renderable, Fitted):
        return [renderable.table]
    if isinstance(renderable, Group):
        return [t for r in renderable.renderables for t in tables_in(r)]
    return []


def plain(text: Any) -> str:
    return Console().render_str(text).plain if isinstance(text, str) else str(text)


def cells(table: Table, label_headers: bool = True) -> list[str]:
    """Every header and cell of `table` as plain text (empty cells left out); without the
    headers of the label columns (model, constraint) when not `label_headers`."""
    skipped = 0 if label_headers else label_columns(table)
    texts = []
    for index, column in enumerate(table.columns):
        if index >= skipped:
            texts.append(column.header)
        texts.extend(column._cells)
    return [plain(t) for t in texts if t]


def assert_whole(table: Table, shown: str, label_headers: bool = True) -> None:
    """Every header and every value of `table` is in `shown`, none cut. A narrow console
    may show rows as blocks under their labels, with no label headers: `label_headers`
    False leaves those out."""
    assert "…" not in shown, shown
    for text in cells(table, label_headers):
        for line in text.splitlines():  # a rate and its interval are two lines of a cell
            assert line in shown, (line, shown)
