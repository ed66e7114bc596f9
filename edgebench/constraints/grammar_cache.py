"""The converted-grammar cache on disk, bounded: least recently used grammars go first.

Converting a schema to GBNF is cheap next to decoding, but a run over thousands of
schemas would otherwise grow the cache without end (46 MB for 1,000 JSONSchemaBench
schemas, one grammar of 31 MB). The cache keeps at most `EDGEBENCH_GRAMMAR_CACHE_MB`
megabytes (default 64; 0 turns it off) and never stores one grammar larger than an
eighth of that (such a grammar is converted again when needed). A read marks a grammar
as used (its mtime); after each write the least recently used ones are removed until the
cache fits. Failing to write the cache never fails a compile.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import UserError
from edgebench.io import write_text_atomic
from edgebench.readback import read_text

LIMIT_ENV = "EDGEBENCH_GRAMMAR_CACHE_MB"
DEFAULT_LIMIT_MB = 64
ENTRY_SHARE = 8  # one grammar may take at most 1/8 of the cache
SUFFIX = ".gbnf"


def limit_from_env() -> int:
    """The cache's size limit in bytes from the environment (a one-line error if bad)."""
    text = os.environ.get(LIMIT_ENV, "").strip()
    if not text:
        return DEFAULT_LIMIT_MB << 20
    try:
        megabytes = float(text)
    except ValueError:
        raise UserError(f"{LIMIT_ENV}: '{text}' is not a number of megabytes") from None
    if not megabytes >= 0:
        raise UserError(f"{LIMIT_ENV}: {text} is below 0")
    return int(megabytes * (1 << 20))


@dataclass(frozen=True)
class GrammarCache:
    folder: Path
    limit_bytes: int

    @property
    def entry_limit_bytes(self) -> int:
        return self.limit_bytes // ENTRY_SHARE

    def get(self, name: str) -> str | None:
        """The cached grammar `name`, marked as just used; None when absent."""
        path = self.folder / name
        try:  # bounded: a FIFO or a device in the cache would hang or fill the memory
            text = read_text(path, "cached grammar", self.entry_limit_bytes)
        except UserError:
            return None  # absent, evicted by another worker meanwhile, or not ours
        with contextlib.suppress(OSError):  # a read-only cache: the order is only a hint
            os.utime(path)
        return text

    def put(self, name: str, text: str) -> bool:
        """Store `text` as `name` unless it is too large; evict to fit. Whether stored."""
        if len(text.encode("utf-8")) > self.entry_limit_bytes:
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.folder / name, text)
            self.evict()
        except OSError:
            return False  # a read-only or full cache folder: convert again next time
        return True

    def entries(self) -> list[tuple[int, int, Path]]:
        """(last use in ns, size, path) of every cached grammar, least recent first."""
        found = []
        for path in self.folder.glob(f"*{SUFFIX}"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            found.append((stat.st_mtime_ns, stat.st_size, path))
        return sorted(found)

    def evict(self) -> list[Path]:
        """Remove the least recently used grammars until the cache fits; the removed."""
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = []
        for _, size, path in entries:
            if total <= self.limit_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed.append(path)
        return removed
