"""Tables that keep every name and number whole at any width (a Pi over SSH at 80
columns). A table too wide for the console is shown, in the first way that fits:
1. one table per arm, its labels (model, constraint) on a line above it;
2. in at most `MAX_PARTS` consecutive tables of its columns, each repeating the labels;
3. one block per row: its labels on a line, then `header value` pairs.
Rich would instead squeeze columns until names and numbers end in "…". A caption is
left-aligned lines under the table at the console's width, never a centred paragraph
squeezed to the table's. `Trimmed` first drops columns a reader can spare, so rows stay
side by side at 80 columns."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

# Wide enough to measure any table at its natural width (no cell wrapped).
_UNBOUNDED = 100_000
# More parts than this read worse than one block per row.
MAX_PARTS = 3


def label_columns(table: Table) -> int:
    """The leading left-aligned columns: the labels of a row (model, constraint, group);
    the figures after them are right-aligned."""
    count = 0
    for column in table.columns:
        if column.justify != "left":
            break
        count += 1
    return max(count, 1)


class Fitted:
    """`table` as is when it fits the console's width, else split (see the module)."""

    def __init__(self, table: Table, labels: int | None = None) -> None:
        self.table = table
        self.labels = label_columns(table) if labels is None else labels

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _laid_out(console, _uncaptioned(self.table), self.labels, options.max_width)
        if self.table.caption:
            yield caption_text(self.table.caption)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, min(options.max_width, natural_width(console, self.table)))


def _laid_out(console: Console, table: Table, labels: int, width: int) -> RenderResult:
    if natural_width(console, table) <= width:
        yield table
        return
    for layout in (_by_arm, _split):
        parts = layout(console, table, labels, width)
        if parts is not None:
            if table.title:  # at the console's width, not a part's
                yield _plain(table.title)
            yield from parts
            return
    yield from _stacked(table, labels, width)


def _uncaptioned(table: Table) -> Table:
    part = copy.copy(table)
    part.caption = None
    return part


def caption_text(caption: object) -> Text:
    """A caption as left-aligned lines (wrapped at the console's width, not the table's)
    that end at their text: rich's "left" pads every line with spaces to the console's
    width (cli/console.py PIPED_WIDTH when piped), "default" aligns them the same
    without."""
    text = _plain(caption)
    text.justify = "default"
    return text


class Trimmed:
    """A table too wide for the console shown with fewer columns: the `optional` headers
    dropped, in that order, until it fits (then `Fitted`'s layouts if it still does not),
    with one line saying which. Caption lines `header: meaning` of a dropped column are
    left out; the others are packed a few to a line, ` · ` between them."""

    def __init__(self, table: Table, optional: Sequence[str]) -> None:
        self.table = table
        self.optional = list(optional)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        table = _uncaptioned(self.table)
        table.title = None  # at the console's width, not the table's
        if self.table.title:
            yield caption_text(self.table.title)
        headers = [_plain(c.header).plain for c in table.columns]
        dropped: list[str] = []
        for header in dict.fromkeys(self.optional):
            if natural_width(console, table) <= width:
                break
            if header in headers:
                dropped.append(header)
                keep = [c for c in table.columns if _plain(c.header).plain not in dropped]
                table = _part(table, keep, False)
        yield from _laid_out(console, table, label_columns(table), width)
        lines = _plain(self.table.caption).plain.splitlines() if self.table.caption else []
        legend = [line for line in lines if line.split(": ", 1)[0] in headers]
        shown = [line for line in legend if line.split(": ", 1)[0] not in dropped]
        notes = [line for line in lines if line not in legend]
        if shown:
            yield caption_text(" · ".join(shown))
        if notes:
            yield caption_text("\n".join(notes))
        if dropped:
            yield caption_text(
                f"not shown at this width: {', '.join(dropped)} (--format md or csv has "
                "every column)"
            )

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


def fitted(*tables: Table | None) -> Group:
    """Every table given (None: left out), each fitted."""
    return Group(*(Fitted(t) for t in tables if t is not None))


def natural_width(console: Console, table: Table) -> int:
    """The width `table` takes with no cell wrapped or cut."""
    options = console.options.update(width=_UNBOUNDED)
    return Measurement.get(console, options, table).maximum


def _part(table: Table, columns: list[Column], last: bool) -> Table:
    """A table of `columns` (copies: a column holds its cells) with `table`'s rows' styles,
    no title (the caller shows it once), the caption on the last part."""
    part = copy.copy(table)
    part.columns = [copy.copy(column) for column in columns]
    part.title = None
    part.caption = table.caption if last else None
    return part


def _sections(table: Table, labels: int) -> list[tuple[int, int]]:
    """Row ranges of the arms: an arm's labels (every label column but the last, the
    group) are on its first row only."""
    arm_columns = table.columns[: labels - 1]
    starts = [
        row
        for row in range(table.row_count)
        if any(_plain(c._cells[row]).plain for c in arm_columns)
    ]
    if starts and starts[0] != 0:  # rows before the first labels: an arm of their own
        starts.insert(0, 0)
    return [(a, b) for a, b in zip(starts, [*starts[1:], table.row_count], strict=True)]


def _by_arm(console: Console, table: Table, labels: int, width: int) -> list[Text | Table] | None:
    """One table per arm of several rows under a line of the arm's labels; None when the
    table has no arm labels or one of them does not fit."""
    sections = _sections(table, labels) if labels > 1 else []
    if not sections or all(b - a == 1 for a, b in sections):
        return None
    parts: list[Text | Table] = []
    for index, (a, b) in enumerate(sections):
        part = _part(table, table.columns[labels - 1 :], index == len(sections) - 1)
        for column in part.columns:
            column._cells = column._cells[a:b]
        part.rows = table.rows[a:b]
        if natural_width(console, part) > width:
            return None
        cells = [_plain(c._cells[a]).plain for c in table.columns[: labels - 1]]
        parts += [_head(_named(table, cells), width), part]
    return parts


def _split(console: Console, table: Table, labels: int, width: int) -> list[Table] | None:
    """Consecutive parts of the figures, each under the label columns and within `width`;
    None when the labels and any one figure do not fit together."""
    keep, rest = table.columns[:labels], table.columns[labels:]
    groups: list[list[Column]] = []
    current: list[Column] = []
    for column in rest:
        trial = _part(table, [*keep, *current, column], False)
        if natural_width(console, trial) <= width:
            current.append(column)
            continue
        if not current:
            return None
        groups.append(current)
        current = [column]
        if natural_width(console, _part(table, [*keep, column], False)) > width:
            return None
    groups.append(current)
    if len(groups) > MAX_PARTS:
        return None
    return [
        _part(table, [*keep, *group], index == len(groups) - 1)
        for index, group in enumerate(groups)
    ]


def _named(table: Table, labels: list[str]) -> list[tuple[str, str]]:
    """A row's label values with their headers (none for the first: the model's name
    says what it is), empty ones left out."""
    headers = [_plain(c.header).plain for c in table.columns]
    return [
        ("" if index == 0 else headers[index], value) for index, value in enumerate(labels) if value
    ]


def _head(labels: list[tuple[str, str]], width: int) -> Text:
    """An arm's labels, each after its header ("model-x · constraint none · depth 2": the
    header is no longer above them), on one line; one a line when that is too wide, a
    header dropped where it would push its value over the width. A line break never
    falls inside a name."""
    named = [f"{header} {value}" if header else value for header, value in labels]
    line = " · ".join(named)
    if cell_len(line) <= width:
        return Text(line, style="bold")
    lines = [
        n if cell_len(n) <= width else value for n, (_, value) in zip(named, labels, strict=True)
    ]
    return Text("\n".join(lines), style="bold")


def _widest(text: Text) -> int:
    return max((cell_len(line) for line in text.plain.splitlines()), default=0)


def _plain(cell: object) -> Text:
    if isinstance(cell, Text):
        return cell
    return Text.from_markup(cell) if isinstance(cell, str) else Text(str(cell))


def _stacked(table: Table, labels: int, width: int) -> Iterator[Text | Table]:
    """One block per row: its labels on a line (an arm's labels carried down to its
    other rows), then `header value` pairs, as many to a line as fit, aligned across
    blocks."""
    if table.title:
        yield _plain(table.title)
    headers = [_plain(column.header).plain for column in table.columns[labels:]]
    rows = [[_plain(c._cells[row]) for c in table.columns] for row in range(table.row_count)]
    header_width = max((cell_len(h) for h in headers), default=0)
    value_width = max((_widest(cell) for cells in rows for cell in cells[labels:]), default=0)
    per_line = max(1, (width + 2) // (header_width + value_width + 3))
    carried = [""] * labels
    for cells in rows:
        for index in range(labels):
            if cells[index].plain or index == labels - 1:
                carried[index] = cells[index].plain
        head = _named(table, carried)
        if head:
            yield _head(head, width)
        grid = Table.grid(padding=(0, 1))
        for _ in range(per_line):
            grid.add_column(style="dim", min_width=header_width)
            grid.add_column(justify="right", min_width=value_width)
        pairs = list(zip(headers, cells[labels:], strict=True))
        for start in range(0, len(pairs), per_line):
            line: list[str | Text] = []
            for header, value in pairs[start : start + per_line]:
                line += [header, value]
            grid.add_row(*line)
        yield grid
    if table.caption:
        yield _plain(table.caption)
