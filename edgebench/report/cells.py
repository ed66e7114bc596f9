"""The HTML page's table cells and columns: a cell's text with the value it sorts by,
a column's sort key and whether it is on the first screen, and a table as the template
reads it. Shared by every table of the page (html.py, device_view.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from edgebench.analysis.rundata import ArmView
from edgebench.report import facts


@dataclass(frozen=True)
class TableCell:
    text: str
    value: Any  # what the column sorts by (a number, or text)
    numeric: bool = False
    note: str = ""  # shown under the text: a figure's 95% interval


@dataclass(frozen=True)
class Column:
    key: str  # the sort key (#sort=KEY), stable across versions
    label: str
    first: bool = True  # on the first screen; False: behind the column chooser
    # How a text cell may wrap so the figures keep the first screen: "anywhere" (long
    # names with no space: a run folder, a model label) or "words" (at spaces only:
    # "llama.cpp GBNF"); "" keeps it on one line.
    wrap: str = ""


def num_cell(value: Any, digits: int) -> TableCell:
    """A number rounded to `digits`; "—" (sorting last) when there is none, never 0."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return TableCell(facts.NO_VALUE, "", True)
    return TableCell(facts.fmt(float(value), digits), value, True)


def perf_cell(arm: ArmView, key: str, value: Any, digits: int) -> TableCell:
    """A speed or memory figure, a p50 with its 95% interval under it; TTFT marked warm
    when a prefix cache served prompts."""
    cell = num_cell(value, digits)
    return replace(
        cell,
        text=facts.warm(cell.text, arm.result.perf, key),
        note=facts.perf_interval(arm.result, key, digits),
    )


def text_cell(value: Any) -> TableCell:
    text = facts.fmt(value)
    return TableCell(text, "" if value is None else text)


def rate_cell(value: Any, interval: list[float] | None) -> TableCell:
    """A rate with its 95% interval under it; it sorts on the rate."""
    return replace(num_cell(value, 3), note=facts.interval_text(interval))


def table_data(columns: list[Column], rows: list[list[TableCell]], **extra: Any) -> dict[str, Any]:
    return {
        "columns": columns,
        "rows": rows,
        "optional": [c for c in columns if not c.first],
        **extra,
    }
