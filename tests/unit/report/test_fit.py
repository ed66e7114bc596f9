"""report/fit.py: a table too wide for the console keeps every cell whole: one table per
arm, then parts of its columns under repeated labels, then one block per row."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from edgebench.report.fit import MAX_PARTS, Fitted
from tests.helpers.tables import assert_whole


def shown(table: Table, width: int) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(Fitted(table))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width, text
    return text


def wide(figures: int, label: str = "model-name") -> Table:
    table = Table(title="side by side")
    table.add_column("model", no_wrap=True)
    table.add_column("mode")
    for index in range(figures):
        table.add_column(f"figure {index}", justify="right")
    for mode in ("none", "mask"):
        table.add_row(label, mode, *(f"{index}.{mode}" for index in range(figures)))
    return table


def test_a_table_that_fits_is_shown_as_is() -> None:
    table = wide(2)
    text = shown(table, 80)
    assert text.count("┏") == 1
    assert_whole(table, text)


def test_a_wide_table_is_split_into_parts_under_its_labels() -> None:
    table = wide(8)
    text = shown(table, 80)
    assert 1 < text.count("┏") <= MAX_PARTS
    assert text.count("model-name") == 2 * text.count("┏")  # the labels in every part
    assert_whole(table, text)


def test_one_table_per_arm_when_arms_span_several_rows() -> None:
    table = Table(title="accuracy")
    for header in ("model", "constraint", "group"):
        table.add_column(header, no_wrap=True)
    for header in ("n", "score one", "score two", "score three"):
        table.add_column(header, justify="right")
    long_name = "a-model-whose-name-takes-most-of-the-width-q4_k_m"
    for mode in ("none", "mask"):
        table.add_row(long_name, mode, "simple", "3", "0.500", "0.250", "0.125")
        table.add_row("", "", "overall", "3", "0.500", "0.250", "0.125", end_section=True)
    text = shown(table, 80)
    for mode in ("none", "mask"):  # the arm's labels above its table, each named
        assert f"{long_name} · constraint {mode}" in text
    assert text.count("┏") == 2
    assert_whole(table, text, label_headers=False)


def test_too_many_parts_become_one_block_per_row() -> None:
    label = "x" * 60  # the labels leave room for one figure at a time
    table = wide(12, label)
    text = shown(table, 80)
    assert "┏" not in text
    assert f"{label} · mode none" in text and f"{label} · mode mask" in text
    assert_whole(table, text, label_headers=False)
