"""Read the first sheet of a user's .xlsx file as rows of {column: value}, safely.

An .xlsx file is a zip of XML documents, so a hostile one can be a zip bomb or carry an
XML entity bomb ("billion laughs"). Before openpyxl parses anything the archive is
checked: it must be a zip, the file and its unpacked members must stay under fixed
limits, and no XML member may declare a DTD or entities (a spreadsheet never needs
them). openpyxl then parses with defusedxml when it is installed (the `xlsx` extra
installs it), which refuses entities a second time.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.readback import check_regular

MAX_FILE_BYTES = 100 * 1024 * 1024  # the whole DeepJSONEval release is a few MB
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
MAX_MEMBERS = 10_000
_CHUNK = 1 << 20
# A DTD or entity declaration anywhere in an XML member; the overlap between chunks lets a
# declaration that straddles two chunks still match.
_DECLARATION = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_OVERLAP = 16


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB"


def check_xlsx_archive(path: Path) -> None:
    """Refuse a file that is not a zip, is too big packed or unpacked, or declares XML
    entities; each refusal is a one-line UserError naming the file."""
    size = check_regular(path, "dataset file").st_size  # a FIFO would block the zip reader
    if size > MAX_FILE_BYTES:
        raise UserError(f"{path}: {_mb(size)} is over the {_mb(MAX_FILE_BYTES)} limit for .xlsx")
    if not zipfile.is_zipfile(path):
        raise UserError(f"{path}: not an .xlsx file (an .xlsx is a zip archive; this is not one)")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise UserError(f"{path}: {len(members)} parts in the archive, over {MAX_MEMBERS}")
            unpacked = sum(member.file_size for member in members)
            if unpacked > MAX_UNPACKED_BYTES:
                raise UserError(
                    f"{path}: unpacks to {_mb(unpacked)}, over the "
                    f"{_mb(MAX_UNPACKED_BYTES)} limit (a zip bomb?)"
                )
            for member in members:
                if member.filename.endswith((".xml", ".rels", ".vml")):
                    _refuse_declarations(archive, member, path)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise UserError(f"{path}: damaged .xlsx archive ({exc})") from None


def _refuse_declarations(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path) -> None:
    read = 0
    tail = b""
    with archive.open(member) as handle:
        while chunk := handle.read(_CHUNK):
            read += len(chunk)
            if read > member.file_size:  # the header lied about the size
                raise UserError(f"{path}: {member.filename} unpacks beyond its declared size")
            if _DECLARATION.search(tail + chunk):
                raise UserError(
                    f"{path}: {member.filename} declares a DTD or XML entities; refused "
                    "(entity expansion can exhaust memory, and spreadsheets never need them)"
                )
            tail = chunk[-_OVERLAP:]


def read_xlsx_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(sheet row number, {header: value}) for every non-empty data row of the first sheet.

    The first row holds the column names."""
    check_xlsx_archive(path)
    try:
        import openpyxl
    except ImportError:
        raise UserError(
            f"{path}: reading .xlsx needs openpyxl: pip install 'edgebench[xlsx]'"
        ) from None
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except UserError:
        raise
    except Exception as exc:  # openpyxl raises many types for malformed parts
        raise UserError(f"{path}: cannot read .xlsx ({type(exc).__name__}: {exc})") from None
    try:
        sheet = workbook.worksheets[0] if workbook.worksheets else None
        if sheet is None:
            raise UserError(f"{path}: the workbook has no worksheet")
        rows = sheet.iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            raise UserError(f"{path}: the first sheet is empty (no header row)")
        names = [str(cell).strip() if cell is not None else "" for cell in header]
        result: list[tuple[int, dict[str, Any]]] = []
        for number, values in enumerate(rows, start=2):
            if all(value is None or value == "" for value in values):
                continue
            row = {name: value for name, value in zip(names, values, strict=False) if name}
            result.append((number, row))
        return result
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"{path}: cannot read .xlsx ({type(exc).__name__}: {exc})") from None
    finally:
        workbook.close()
