"""Reading a user's .xlsx safely: rows of the first sheet, and one-line refusals of what is
not an .xlsx, is too big packed or unpacked, or declares XML entities."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.tasks import xlsx as xlsx_module
from edgebench.tasks.xlsx import read_xlsx_rows

LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><workbook>&lol2;</workbook>'
)


def write_xlsx(path: Path, rows: list[list[Any]]) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    for values in rows:
        workbook.active.append(values)
    workbook.save(path)
    return path


def replace_member(source: Path, target: Path, name: str, data: bytes) -> Path:
    """A copy of the archive `source` with member `name` replaced by `data`."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            new.writestr(item, data if item.filename == name else old.read(item))
    return target


def test_rows_come_with_their_sheet_row_number_under_the_header_names(tmp_path: Path) -> None:
    path = write_xlsx(
        tmp_path / "d.xlsx",
        [[" id ", "text", None], ["a", "first", "dropped"], [None, None, None], ["b", 7, None]],
    )
    assert read_xlsx_rows(path) == [(2, {"id": "a", "text": "first"}), (4, {"id": "b", "text": 7})]


def test_a_file_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.xlsx"
    path.write_text("schema,text,json\n")
    with pytest.raises(UserError, match=r"d\.xlsx: not an \.xlsx file"):
        read_xlsx_rows(path)
    with pytest.raises(UserError, match=r"nowhere\.xlsx: dataset file not found"):
        read_xlsx_rows(tmp_path / "nowhere.xlsx")


def test_an_oversized_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_xlsx(tmp_path / "d.xlsx", [["id"], ["a"]])
    monkeypatch.setattr(xlsx_module, "MAX_FILE_BYTES", 1024)
    with pytest.raises(UserError, match=r"d\.xlsx: .* MB is over the 0\.0 MB limit for \.xlsx"):
        read_xlsx_rows(path)


def test_an_archive_that_unpacks_too_large_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/sharedStrings.xml", "<sst>" + "a" * 2_000_000 + "</sst>")
    assert path.stat().st_size < 100_000  # small packed, large unpacked
    monkeypatch.setattr(xlsx_module, "MAX_UNPACKED_BYTES", 1_000_000)
    expected = r"unpacks to 1\.9 MB, over the 1\.0 MB limit \(a zip bomb\?\)"
    with pytest.raises(UserError, match=expected):
        read_xlsx_rows(path)


def test_xml_entity_declarations_are_refused(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "d.xlsx", [["id"], ["a"]])
    evil = replace_member(path, tmp_path / "evil.xlsx", "xl/workbook.xml", LAUGHS.encode())
    with pytest.raises(UserError, match=r"xl/workbook\.xml declares a DTD or XML entities"):
        read_xlsx_rows(evil)


def test_a_declaration_across_two_read_chunks_is_still_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_xlsx(tmp_path / "d.xlsx", [["id"], ["a"]])
    monkeypatch.setattr(xlsx_module, "_CHUNK", 64)
    # "<!DOCTYPE" starts 4 bytes before the first 64-byte chunk ends
    member = (b" " * 60 + LAUGHS.encode()[len('<?xml version="1.0"?>') :]).ljust(200)
    assert member[60:64] == b"<!DO"
    evil = replace_member(path, tmp_path / "evil.xlsx", "xl/workbook.xml", member)
    with pytest.raises(UserError, match=r"declares a DTD or XML entities"):
        read_xlsx_rows(evil)
