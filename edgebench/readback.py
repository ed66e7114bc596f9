"""The one bounded reader of every file edgebench reads back: datasets, run folders (its
own or copied from elsewhere), plans and plan-status.json, fleet results, the files a
results database stores, model sidecars.

Such files are data that people copy, fetch and hand-edit, so every read is bounded the
same way, and every problem is a one-line UserError naming the file (and line):
- only regular files: a FIFO would block the open, a device (/dev/zero) never ends, and a
  symlink is followed only to a regular file;
- a size limit per kind of file, checked before reading and again while reading (a file
  that grows, or lies about its size as /proc files do);
- JSON with integers of at most MAX_INT_DIGITS digits (Python's own limit is a ValueError
  traceback) and nesting bounded (Python's is a RecursionError);
- JSONL read a line at a time, each line bounded, a torn last line (a crash's doing)
  reported apart.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from edgebench.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# CPython's own default limit (sys.int_info.default_max_str_digits); fixed here so that
# every Python rejects the same files.
MAX_INT_DIGITS = 4300
# A JSON document edgebench keeps (manifest, summary, fidelity, bench, plan-status, a
# sidecar) is a few MB at most, and is decoded whole.
MAX_DOCUMENT_BYTES = 64 << 20
# A JSONL file (samples, timeline, power log) is read a line at a time.
MAX_JSONL_BYTES = 4 << 30
MAX_LINE_BYTES = 64 << 20
# A dataset or schema file a user gives (read whole, like a document).
MAX_DATASET_BYTES = 1 << 30
# Nesting of the documents edgebench writes: tens of levels; a model's parsed output in
# samples.jsonl is bounded by the parser instead (READ_BACK_ANY).
MAX_DOCUMENT_NESTING = 200
READ_BACK_ANY = None  # `nesting` for files holding model outputs: the decoder's own bound

# A plan is a few hundred bytes, its tables and lists two or three levels deep.
MAX_PLAN_BYTES = 1 << 20
MAX_PLAN_NESTING = 20


class _Refused(ValueError):
    """A value the read-back decoder does not take (an over-long integer)."""


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"integer with {digits} digits, limit {MAX_INT_DIGITS}")
    return int(text)


# NaN and Infinity are read back: Python's json module writes them for a float nan.
_DECODER = json.JSONDecoder(parse_int=_parse_int)


def _size(amount: int) -> str:
    return f"{amount / (1 << 20):,.0f} MiB" if amount >= 1 << 20 else f"{amount:,} bytes"


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def present(path: Path) -> bool:
    """Whether anything is at `path` (a dangling link or a FIFO too): such a file is then
    read, and refused in one line, instead of being taken for missing."""
    return os.path.lexists(path)


def check_regular(path: Path, what: str) -> os.stat_result:
    """`path` (links followed) is a regular file, or a one-line UserError saying what it
    is; for paths handed on to other code (a hash, a parser) that would block on a FIFO
    or never end on a device."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise UserError(f"{path}: {what} is a link to nothing") from None
        raise UserError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(path, what, info.st_mode)
    return info


def _not_regular(path: Path, what: str, mode: int) -> UserError:
    link = " a link to" if path.is_symlink() else ""
    return UserError(f"{path}: {what} is{link} {_kind_of(mode)}, not a regular file")


@contextlib.contextmanager
def open_regular(path: Path, what: str, limit: int) -> Iterator[BinaryIO]:
    """`path` opened for reading when it is a regular file of at most `limit` bytes.
    O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        check_regular(path, what)  # names a dangling link
        raise UserError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(path, what, info.st_mode)
        if info.st_size > limit:
            raise _too_big(path, what, limit)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        os.set_blocking(fd, True)
        yield handle


def _too_big(path: Path, what: str, limit: int) -> UserError:
    return UserError(f"{path}: {what} is larger than the {_size(limit)} limit")


def read_bytes(path: Path, what: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """A regular file's bytes, at most `limit` of them, or a one-line UserError."""
    with open_regular(path, what, limit) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise UserError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if len(data) > limit:  # it grew, or its size was not its length
        raise _too_big(path, what, limit)
    return data


def decode_utf8(data: bytes, where: str) -> str:
    """UTF-8 text, or a one-line UserError naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"{where}:{line}: not UTF-8 text (byte {exc.start})") from None


def read_text(path: Path, what: str, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """A regular UTF-8 text file of at most `limit` bytes, or a one-line UserError."""
    return decode_utf8(read_bytes(path, what, limit), str(path))


def depth_over(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` levels; iterative, stops early."""
    pending = [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            if level + 1 > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            pending.extend(
                (child, level + 1) for child in children if isinstance(child, dict | list)
            )
    return False


def decode_json(text: str, where: str, nesting: int | None = MAX_DOCUMENT_NESTING) -> Any:
    """One JSON value, bounded: a one-line UserError at `where` for text that is not
    JSON, an over-long integer, or nesting deeper than `nesting` (None: the decoder's
    own bound, for files holding model outputs)."""
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:  # _Refused, or the interpreter's own int limits
        raise UserError(f"{where}: JSON refused ({exc})") from None
    if nesting is not None and depth_over(value, nesting):
        raise UserError(f"{where}: JSON nested too deeply (more than {nesting} levels)")
    return value


def read_json(
    path: Path,
    what: str,
    *,
    limit: int = MAX_DOCUMENT_BYTES,
    nesting: int | None = MAX_DOCUMENT_NESTING,
) -> Any:
    """A JSON file, bounded (see the module's doc), or a one-line UserError naming it."""
    return decode_json(read_text(path, what, limit).removeprefix("\ufeff"), str(path), nesting)


def read_json_object(
    path: Path,
    what: str,
    *,
    limit: int = MAX_DOCUMENT_BYTES,
    nesting: int | None = MAX_DOCUMENT_NESTING,
) -> dict[str, Any]:
    """`read_json` of a file that must hold a JSON object."""
    value = read_json(path, what, limit=limit, nesting=nesting)
    if not isinstance(value, dict):
        raise UserError(f"{path}: {what} must be a JSON object, got {json_type(value)}")
    return value


def json_type(value: Any) -> str:
    """A JSON value's kind as an error names it ("an array"; not JSON: its type)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _lines(handle: BinaryIO, path: Path, what: str, limit: int) -> Iterator[tuple[int, bytes]]:
    """(number, line) of a file, each line at most MAX_LINE_BYTES, the file at most
    `limit` bytes (counted as read: a file may grow while it is read)."""
    total = 0
    number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if total > limit:
            raise _too_big(path, what, limit)
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise UserError(f"{path}: line {number}: longer than the {_size(MAX_LINE_BYTES)} limit")
        yield number, line


def jsonl_values(
    path: Path,
    what: str,
    *,
    limit: int = MAX_JSONL_BYTES,
    nesting: int | None = MAX_DOCUMENT_NESTING,
) -> tuple[list[tuple[int, Any]], bool]:
    """Each non-blank line's JSON value with its line number (blank lines count, as in
    an editor) and whether a torn last line (no newline, not JSON: a crash cut the last
    write short) was left out. Any other bad line is a UserError naming file and line."""
    values: list[tuple[int, Any]] = []
    torn = False
    with open_regular(path, what, limit) as handle:
        for number, raw in _lines(handle, path, what, limit):
            where = f"{path}: line {number}"
            text = raw.decode("utf-8", errors="surrogateescape")
            if not text.strip():
                continue
            try:
                values.append((number, decode_json(text, where, nesting)))
            except UserError:
                if not raw.endswith(b"\n"):
                    torn = True  # the last write was cut short
                    break
                raise
    return values, torn


def jsonl_bytes_values(
    data: bytes, where: str, nesting: int | None = MAX_DOCUMENT_NESTING
) -> list[tuple[int, Any]]:
    """`jsonl_values` of JSONL content held in memory (a file a database stored), the
    torn last line left out as a reader of the folder would."""
    values: list[tuple[int, Any]] = []
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        text = raw.decode("utf-8", errors="surrogateescape")
        if not text.strip():
            continue
        try:
            values.append((number, decode_json(text, f"{where}: line {number}", nesting)))
        except UserError:
            if number == len(lines):  # no newline after it: torn
                break
            raise
    return values


def read_toml(path: Path, what: str, limit: int, nesting: int) -> tuple[str, dict[str, Any]]:
    """A TOML file (its text and its tables), bounded: a regular file of at most `limit`
    bytes, nested at most `nesting` levels; tomllib's syntax errors with their line, and
    what it lets through as other exceptions (a RecursionError for deep arrays and inline
    tables, a ValueError for an over-long integer), are one line naming the file."""
    # a BOM (an editor's on Windows) is no part of the TOML: tomllib refuses it
    text = read_text(path, what, limit).removeprefix("\ufeff")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib names the line inside its message: put it where every error has it
        at = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        where = f"{path}:{at.group(1)}" if at else str(path)
        raise UserError(f"{where}: not valid TOML ({str(exc).strip()})") from None
    except RecursionError:  # tomllib recurses per level of nested arrays and tables
        raise UserError(f"{path}: not valid TOML (nested too deeply)") from None
    except ValueError as exc:  # an integer over Python's digit limit
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    if depth_over(data, nesting):
        raise UserError(f"{path}: {what} nested too deeply (over {nesting} levels)")
    return text, data
