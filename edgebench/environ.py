"""Environment variables set for the length of a block (child processes inherit them)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def temporary_environ(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in os.environ, then put back what was there (or nothing) after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
