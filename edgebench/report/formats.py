"""`--format table|md|csv|json`: the rich tables a command prints, as GitHub Markdown
or CSV. Both are read off the very tables the terminal shows (headers and cell texts),
so a number is the same in every format."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from edgebench.errors import UserError
from edgebench.report import markdown as md

FORMATS = ("table", "md", "csv", "json")


def check_format(value: str) -> str:
    """`--format`: one of FORMATS, or a one-line error listing them."""
    if value not in FORMATS:
        raise UserError(f"--format {value!r}: choose one of {', '.join(FORMATS)}")
    return value


def chosen_format(output_format: str, as_json: bool) -> str:
    """`--format`, with `--json` an alias of `--format json`."""
    if as_json and output_format not in ("table", "json"):
        raise UserError(f"--json prints JSON: it cannot go with --format {output_format}")
    return "json" if as_json else check_format(output_format)


def check_out(out: object) -> None:
    """`-o/--out` is a path: `-o md` (llama-bench's spelling of the format) would write a
    file or folder named `md`, so a bare format name is refused."""
    if out is not None and str(out) in FORMATS:
        raise UserError(
            f"--out {out}: -o/--out is where to write; to print {out}, use --format {out} "
            f"(a file named {out}: --out ./{out})"
        )


def _plain(cell: object) -> str:
    """A cell's text without rich markup."""
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)


@dataclass(frozen=True)
class Grid:
    """A table's title, headers, rows of cell texts (a cell may hold a value over its
    interval: two lines) and caption lines."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str]


def grid(table: Table) -> Grid:
    headers = [_plain(column.header) for column in table.columns]
    columns = [[_plain(cell) for cell in column._cells] for column in table.columns]
    rows = [list(row) for row in zip(*columns, strict=True)] if columns else []
    caption = _plain(table.caption) if table.caption else ""
    title = _plain(table.title) if table.title else ""
    return Grid(title, headers, rows, [line for line in caption.splitlines() if line])


# A figure's characters: no Markdown can start from them inside one table cell, so a
# number, an interval or a count shows as it is typed ("+0.050", "[0.43, 0.85]", "20*").
_FIGURE = set("0123456789.,+-−–%*[] —")


def _md_cell(text: str) -> str:
    one_line = " ".join(text.splitlines())
    if set(one_line) <= _FIGURE and any(ch.isdigit() for ch in one_line):
        return one_line
    return md.cell(one_line)


def _md_table(headers: list[str], rows: list[list[str]], right_from: int) -> str:
    """A GitHub pipe table: figures as typed, any other text escaped (report/markdown.py)."""
    rule = ["---:" if i >= right_from else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(md.cell(h) for h in headers) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _right_from(table: Table) -> int:
    """Markdown aligns right from the first right-aligned column (the figures)."""
    for index, column in enumerate(table.columns):
        if column.justify == "right":
            return index
    return len(table.columns)


def markdown(tables: Iterable[Table | None], notes: Iterable[str] = ()) -> str:
    """Each table as a GitHub pipe table under its title in bold, its caption lines after
    it; a cell's value and its interval on one line ("0.650 [0.43, 0.85]")."""
    blocks = []
    for table in tables:
        if table is None:
            continue
        shown = grid(table)
        block = _md_table(shown.headers, shown.rows, _right_from(table))
        if shown.title:
            block = f"**{md.text(shown.title)}**\n\n{block}"
        if shown.notes:
            block += "\n\n" + "<br>\n".join(md.text(note) for note in shown.notes)
        blocks.append(block)
    blocks += [md.text(note) for note in notes]
    return "\n\n".join(blocks) + "\n"


def csv_text(table: Table) -> str:
    """The table's rows under its headers; a column whose cells hold an interval under
    the value is two columns, `H` and `H 95% CI`."""
    shown = grid(table)
    split = [any("\n" in row[i] for row in shown.rows) for i in range(len(shown.headers))]
    headers: list[str] = []
    for header, two in zip(shown.headers, split, strict=True):
        headers += [header, f"{header} 95% CI"] if two else [header]
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(headers)
    for row in shown.rows:
        cells: list[str] = []
        for cell, two in zip(row, split, strict=True):
            lines = cell.splitlines() or [""]
            cells += [lines[0], " ".join(lines[1:])] if two else [" ".join(lines)]
        writer.writerow(cells)
    return text.getvalue()
