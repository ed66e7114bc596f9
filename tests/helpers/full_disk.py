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
    """`fill(part, after=N, times=M)`: files whose path contains `part` take N more data
    writes, then the next M (None: every one) fail; `free()` ends it. A data write is an
    append's `os.write`, the lock's `os.pwrite`, or the fsync of an atomic write's
    temporary file (its data went through a buffered file object)."""

    part: str | None = None
    after: int = 0
    times: int | None = None
    writes: int = 0
    failed: list[str] = field(default_factory=list)

    def fill(self, part: str, after: int = 0, times: int | None = None) -> None:
        self.part, self.after, self.times, self.writes = part, after, times, 0

    def free(self) -> None:
        self.part = None

    def refuses(self, fd: int, counts: bool) -> bool:
        if self.part is None:
            return False
        target = _target(fd)
        if self.part not in target:
            return False
        if counts:
            self.writes += 1
        if self.writes <= self.after:
            return False
        if self.times is not None and len(self.failed) >= self.times:
            return False
        self.failed.append(target)
        return True


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def full_disk(monkeypatch: pytest.MonkeyPatch) -> FullDisk:
    disk = FullDisk()
    real_write, real_pwrite, real_fsync = os.write, os.pwrite, os.fsync

    def write(fd: int, data: bytes) -> int:
        if disk.refuses(fd, counts=True):
            raise _enospc()
        return real_write(fd, data)

    def pwrite(fd: int, data: bytes, offset: int) -> int:
        if disk.refuses(fd, counts=True):
            raise _enospc()
        return real_pwrite(fd, data, offset)

    def fsync(fd: int) -> None:
        if disk.refuses(fd, counts=_target(fd).endswith(".tmp")):
            raise _enospc()
        real_fsync(fd)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "pwrite", pwrite)
    monkeypatch.setattr(os, "fsync", fsync)
    return disk
