"""Writes that survive a crash: atomic replace for whole files, fsync per JSONL record."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from edgebench.errors import UserError


def read_text_file(path: Path, what: str) -> str:
    """A UTF-8 text file a user gave us; problems are one-line UserErrors naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: {what} not found") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read {what} ({exc.strerror})") from None


def numbered_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """The non-blank lines of a user's JSONL file with their 1-based line numbers.

    Split on "\n" only: str.splitlines would also split inside JSON strings holding
    U+2028 or U+2029, which JSON allows unescaped."""
    text = read_text_file(path, what)
    return [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync it, then rename over `path`,
    so readers see the old file or the new one, never half of one. The file gets the
    usual permissions (0666 less the umask), not mkstemp's private 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


class JsonlAppender:
    """Appends one JSON record per line, flushed and fsynced, so a crash loses at most
    the record being written."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSONL file this tool wrote; a torn last line (crash) is ignored, any
    other bad line is a UserError naming its line."""
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if not line.endswith("\n"):
                    break  # the last write was cut short
                raise UserError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None
    return records
