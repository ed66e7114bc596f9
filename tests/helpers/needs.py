"""What a test needs from the machine that the test install provides: without it the test
is skipped on a developer's machine and fails in CI (CI=true), so a missing install step
can never turn into a silently green run."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip the test, or in CI fail it, saying what is missing."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
