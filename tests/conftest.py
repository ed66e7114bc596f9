"""Shared fixtures. Tests marked `model` need the real SmolLM2 file in the model cache;
outside CI they skip when it is missing, in CI (CI=true) they fail instead, so a missing
install step can never turn into a silently green run."""

from __future__ import annotations

import os
import socket
import urllib.request
from pathlib import Path

import pytest


def smollm2_path() -> Path | None:
    from edgebench.models.fetch import cache_state, cached_file
    from edgebench.models.registry import DEFAULT_MODEL, get_entry

    entry = get_entry(DEFAULT_MODEL)
    return cached_file(entry) if cache_state(entry) == "yes" else None


@pytest.fixture(scope="session")
def smollm2() -> Path:
    path = smollm2_path()
    if path is None:
        message = (
            "SmolLM2 is not in the model cache: run `edgebench models pull smollm2-135m-instruct`"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record any attempt to open a connection or URL; a test asserts the list stays empty.

    Recording (rather than only raising) matters: an exception raised here could be
    swallowed by a reference resolver and look like a proper refusal.
    """
    calls: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        calls.append(repr(args))
        raise OSError("network used in a test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return calls
