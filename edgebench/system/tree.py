"""The kernel's files below a root: the one reader of /proc, /sys and /etc that every
module of system/ reads the machine through (the device block, its identity, heat and
the power sources), and the parser of /proc/cpuinfo they share. The root is
configurable so tests read fake trees of a Raspberry Pi 5 and a laptop."""

from __future__ import annotations

from pathlib import Path

ROOT = Path("/")


class SystemTree:
    """Reads the kernel's files below `root`; unreadable files are None."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root

    def read(self, path: str) -> str:
        """The file's text; OSError (PermissionError for a root-only file) when unreadable."""
        return (self.root / path).read_text(encoding="utf-8", errors="replace").strip()

    def text(self, path: str) -> str | None:
        try:
            return self.read(path)
        except OSError:
            return None

    def number(self, path: str) -> int | None:
        text = self.text(path)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

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
