"""Writes that survive a crash: atomic replace for whole files, fsync per JSONL record.

A whole file (manifest, summary, a card or report) is written to a temporary file in the
same folder, fsynced and renamed over the old one, so a reader, a power cut or a full
disk leaves the old file or the new one, never half of one. JSONL records are appended
one line at a time, flushed and fsynced; a crash can tear only the last line, which
`read_jsonl` ignores and `write_jsonl_atomic` drops.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from edgebench import readback
from edgebench.errors import RunFailure, UserError


def read_text_file(path: Path, what: str) -> str:
    """A UTF-8 text file a user gave us (a dataset, a schema, a plan), read through the
    bounded reader: a regular file within its size limit; problems are one-line
    UserErrors naming it (and for bytes that are not UTF-8, the line they are on)."""
    return readback.read_text(path, what, readback.MAX_DATASET_BYTES)


def numbered_lines(path: Path, what: str) -> list[tuple[int, str]]:
    """The non-blank lines of a user's JSONL file with their 1-based line numbers.

    Split on "\n" only: str.splitlines would also split inside JSON strings holding
    U+2028 or U+2029, which JSON allows unescaped."""
    text = read_text_file(path, what)
    return [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


def write_text_files(out_dir: Path, files: dict[str, str]) -> None:
    """Write {relative path: text} under `out_dir` with "\n" line ends (generated datasets
    must be byte-identical on every machine); problems are one-line UserErrors."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"{out_dir}: exists and is not a folder")
    for relative, text in files.items():
        write_text_atomic(out_dir / relative, text)


def json_line(record: Any, **dump_options: Any) -> str:
    """`record` as JSON text that can always be written as UTF-8.

    Model outputs can decode to lone surrogates ("\\ud800" is valid JSON); those cannot
    be encoded as UTF-8, so such a record is written with ASCII escapes instead."""
    text = json.dumps(record, ensure_ascii=False, **dump_options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(record, ensure_ascii=True, **dump_options)
    return text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class WriteFailed(RunFailure, OSError):
    """A file could not be written (no permission, a read-only file system, a full disk):
    one line naming the file, exit code 1 whatever the reason (failures.py: a refused
    write is never the user's typing mistake). Still an OSError with its errno and
    strerror, so the run engine's disk-error handling (a RunFailure naming the run
    folder, failures.run_failure) sees it as any other refused write."""

    def __init__(self, path: Path, exc: OSError) -> None:
        super().__init__(exc.errno, exc.strerror or str(exc), str(path))
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: cannot write ({self.strerror})"


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync it, then rename over `path`,
    so readers see the old file or the new one, never half of one; on any error (a full
    disk) the temporary file is removed and the old file is untouched. The file gets the
    usual permissions (0666 less the umask), not mkstemp's private 0600. An OSError is
    raised as WriteFailed, naming `path` (not the temporary file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteFailed(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise WriteFailed(path, exc) from None
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make a rename durable (POSIX); best effort where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomic(path: Path, text: str) -> None:
    """`text` as UTF-8; a lone surrogate (a run read back holding "\\ud800" in a name,
    or a byte that was not UTF-8) is written as its escape, never an error."""
    write_bytes_atomic(path, text.encode("utf-8", "backslashreplace"))


def write_json_atomic(path: Path, data: Any) -> None:
    """`write_text_atomic` for a JSON document (indented, UTF-8)."""
    write_text_atomic(path, json_text(data))


def jsonl_text(records: list[Any]) -> str:
    """JSON lines as `JsonlAppender` writes them (`json_line`: lone surrogates escaped)."""
    return "".join(json_line(record) + "\n" for record in records)


def json_text(data: Any) -> str:
    """A JSON document as every whole JSON file edgebench writes it: indented, UTF-8, a
    final newline, lone surrogates escaped (`json_line`)."""
    return json_line(data, indent=2) + "\n"


def write_jsonl_atomic(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace a JSONL file as a whole, atomically (old file or new, never half), in the
    line format of `JsonlAppender`."""
    write_text_atomic(path, jsonl_text(records))


class JsonlAppender:
    """Appends one JSON record per line, fsynced every `fsync_every` records. Each line
    goes to the file in one unbuffered write (the rest of it at once if the system took
    part), so a record that cannot be written (a full disk) is never left in a buffer
    to land later: a crash or a full disk leaves at most a torn last line."""

    def __init__(self, path: Path, fsync_every: int = 1) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        # fsync after every Nth record (every one written: a crash of this process
        # loses none; a power cut at most N - 1)
        self.fsync_every = fsync_every
        self._unsynced = 0

    def append(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"{self.path}: appended to after close")
        data = (json_line(record) + "\n").encode("utf-8")
        while data:
            written = os.write(self._fd, data)
            data = data[written:]
        self._unsynced += 1
        if self._unsynced >= self.fsync_every:
            self._unsynced = 0  # a failed fsync is reported once, here, not again at close
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self._unsynced:
                self._unsynced = 0
                os.fsync(fd)
        finally:
            os.close(fd)

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSONL file this tool wrote; a torn last line (crash) is ignored."""
    return read_jsonl_checked(path)[0]


def read_jsonl_checked(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The records and whether a torn last line was left out. A bad line anywhere else
    (not JSON, or JSON but not an object) is not a crash's doing: it is a UserError naming
    the file and line."""
    values, torn = read_jsonl_numbered(path)
    for number, value in values:
        if not isinstance(value, dict):
            raise UserError(f"{path}: line {number}: expected a JSON object")
    return [value for _, value in values], torn


def read_jsonl_numbered(path: Path) -> tuple[list[tuple[int, Any]], bool]:
    """Each line's JSON value with its line number (blank lines count, as in an editor),
    and whether a torn last line was left out; a line that is not JSON is a UserError.
    Bounded as every read-back is (`readback.jsonl_values`); a line may hold a model's
    output, nested as deeply as the output parser allowed."""
    return readback.jsonl_values(path, "file", nesting=readback.READ_BACK_ANY)
