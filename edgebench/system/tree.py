"""The kernel's files below a root: the one reader of /proc, /sys and /etc that every
module of system/ reads the machine through (the device block, its identity, heat and
the power sources), and the parser of /proc/cpuinfo they share. The root is
configurable so tests read fake trees of a Raspberry Pi 5 and a laptop."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

ROOT = Path("/")


# At most this much of a /proc or /sys file is read (/proc/cpuinfo of a many-core
# machine is a few hundred KiB; an attribute is a page).
READ_LIMIT = 4 << 20
_CHUNK = 65536
_MAX_NUMBER_CHARS = 24  # a 64-bit integer with its sign, and some room


class SystemTree:
    """Reads the kernel's files below `root`; unreadable files are None."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root

    def read(self, path: str) -> str:
        """The file's text; OSError (PermissionError for a root-only file) when unreadable.

        Read as the timeline reads it once a second, so nothing here may block or grow
        without end: a FIFO or a device (a link to /dev/zero) is refused, not read, and
        at most READ_LIMIT bytes are taken (kernel attributes are a page or two; a
        longer file is refused, not cut)."""
        fd = os.open(self.root / path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(self.root / path))
            os.set_blocking(fd, True)
            data = b""
            # a page at a time: /proc/sys refuses (ENOMEM) a read of megabytes at once
            while len(data) <= READ_LIMIT and (chunk := os.read(fd, _CHUNK)):
                data += chunk
        finally:
            os.close(fd)
        if len(data) > READ_LIMIT:
            raise OSError(errno.EFBIG, "larger than a kernel file", str(self.root / path))
        return data.decode("utf-8", errors="replace").strip()

    def text(self, path: str) -> str | None:
        try:
            return self.read(path)
        except OSError:
            return None

    def number(self, path: str) -> int | None:
        """The file's integer; None when it is unreadable, not an integer, or out of the
        64-bit range a kernel attribute holds (a 4,000-digit "temperature" would be an
        OverflowError wherever it is divided)."""
        text = self.text(path)
        if text is None or len(text) > _MAX_NUMBER_CHARS:
            return None
        try:
            value = int(text)
        except ValueError:
            return None
        return value if -(2**64) < value < 2**64 else None

    def glob(self, pattern: str) -> list[Path]:
        return sorted(self.root.glob(pattern))

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def parse_cpuinfo(text: str) -> list[dict[str, str]]:
    """/proc/cpuinfo as one dict per block (processors, and on ARM a board block)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip().lower()] = value.strip()
    if current:
        blocks.append(current)
    return blocks
