"""A disk that fills up, for tests in this process: the system calls edgebench's writers
make (`os.write` of JSONL appends, `os.pwrite` of the run lock, the `os.fsync` that ends
an atomic write of a whole file) fail with ENOSPC for the files a test names, as a full
disk fails them. Reads and every other file are untouched."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

import pytest


def _target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


@dataclass
class FullDisk:
    """`fill(*parts, after=N, times=M)`: files whose path contains one of `parts` take N
    more data writes, then the next M (None: every one) fail; `free()` ends it, and so
    does removing a file named `room_from` (space given back). A data write is an
    append's `os.write`, the lock's `os.pwrite`, or the fsync of an atomic write's
    temporary file (its data went through a buffered file object)."""

    parts: tuple[str, ...] = ()
    after: int = 0
    times: int | None = None
    room_from: str | None = None
    error: int = errno.ENOSPC  # what a refused write raises: EDQUOT, EROFS, EIO too
    writes: int = 0
    failed: list[str] = field(default_factory=list)

    def fill(
        self, *parts: str, after: int = 0, times: int | None = None, room_from: str | None = None
    ) -> None:
        self.parts, self.after, self.times, self.writes = parts, after, times, 0
        self.room_from = room_from

    def free(self) -> None:
        self.parts = ()

    def refuses(self, fd: int, counts: bool) -> bool:
        target = _target(fd)
        if not any(part in target for part in self.parts):
            return False
        if counts:
            self.writes += 1
        if self.writes <= self.after:
            return False
        if self.times is not None and len(self.failed) >= self.times:
            return False
        self.failed.append(target)
        return True


def _refused(code: int) -> OSError:
    return OSError(code, os.strerror(code))


def full_disk(monkeypatch: pytest.MonkeyPatch) -> FullDisk:
    disk = FullDisk()
    real_write, real_pwrite, real_fsync = os.write, os.pwrite, os.fsync

    def write(fd: int, data: bytes) -> int:
        if disk.refuses(fd, counts=True):
            raise _refused(disk.error)
        return real_write(fd, data)

    def pwrite(fd: int, data: bytes, offset: int) -> int:
        if disk.refuses(fd, counts=True):
            raise _refused(disk.error)
        return real_pwrite(fd, data, offset)

    def fsync(fd: int) -> None:
        if disk.refuses(fd, counts=_target(fd).endswith(".tmp")):
            raise _refused(disk.error)
        real_fsync(fd)

    real_unlink = os.unlink

    def unlink(path: object, *args: object, **kwargs: object) -> None:
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]
        if disk.room_from is not None and os.fspath(path).endswith(disk.room_from):  # type: ignore[call-overload]
            disk.free()

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "pwrite", pwrite)
    monkeypatch.setattr(os, "fsync", fsync)
    return disk
