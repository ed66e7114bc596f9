"""What a test needs from the machine that the test install provides: without it the test
is skipped on a developer's machine and fails in CI (CI=true), so a missing install step
can never turn into a silently green run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip the test, or in CI fail it, saying what is missing."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def smollm2_path() -> Path | None:
    """The pulled SmolLM2 file in the model cache, None when it is not there."""
    from edgebench.models.fetch import cache_state, cached_file
    from edgebench.models.registry import DEFAULT_MODEL, get_entry

    entry = get_entry(DEFAULT_MODEL)
    return cached_file(entry) if cache_state(entry) == "yes" else None
