"""Wheels from PyPI, downloaded by our own chunk loop so `models pull` can show bytes,
speed and time left (pip, run as a subprocess, shows a spinner at best).

A pin `name==version` is looked up in PyPI's JSON API (`/pypi/NAME/json`, the release's
files), which gives each wheel's URL, size and sha256; the wheel is streamed to a
`.partial` file, hashed as it comes, and kept only when both match. Nothing is installed.
`EDGEBENCH_PYPI_URL` points the look-up at a mirror that serves the same JSON API; when
the look-up fails (a pip-only mirror, no JSON API), `fetch.py` falls back to pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.models.hashing import CHUNK

DEFAULT_INDEX = "https://pypi.org/pypi"
_TIMEOUT_S = 60


class IndexLookupError(UserError):
    """The index could not say which wheel a pin is (unreachable, no JSON API, no such
    release): pip, with its own configuration, may still find it."""


@dataclass(frozen=True)
class Wheel:
    """One wheel file as the index describes it."""

    pin: str  # name==version, as the registry pins it
    filename: str
    url: str
    size: int
    sha256: str


def index_url() -> str:
    return os.environ.get("EDGEBENCH_PYPI_URL", DEFAULT_INDEX).rstrip("/")


def find_wheel(pin: str) -> Wheel:
    """The wheel of `pin` (a pure-Python one when several are published)."""
    name, _, version = pin.partition("==")
    project = _read_json(f"{index_url()}/{name}/json", pin)
    files = (project.get("releases") or {}).get(version) or []
    wheels = [f for f in files if isinstance(f, dict) and f.get("packagetype") == "bdist_wheel"]
    if not wheels:
        raise IndexLookupError(f"{pin}: the index lists no wheel of version {version}")
    wheels.sort(key=lambda f: not str(f.get("filename", "")).endswith("-none-any.whl"))
    chosen = wheels[0]
    try:
        return Wheel(
            pin=pin,
            filename=Path(str(chosen["filename"])).name,  # a name, never a path
            url=str(chosen["url"]),
            size=int(chosen["size"]),
            sha256=str(chosen["digests"]["sha256"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{pin}: the index's description of the wheel lacks {exc}") from None


def download(wheel: Wheel, folder: Path, advance: Callable[[int], None]) -> Path:
    """Stream `wheel` into `folder`, calling `advance(bytes)` per chunk; the file only
    once its size and sha256 are those the index gave."""
    target = folder / wheel.filename
    partial = folder / f"{wheel.filename}.partial"
    digest = hashlib.sha256()
    size = 0
    try:
        with _open(wheel.url, wheel.pin) as response, open(partial, "wb") as out:
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
                advance(len(chunk))
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UserError(f"{wheel.pin}: download of {wheel.url} failed: {_reason(exc)}") from None
    if size != wheel.size or digest.hexdigest() != wheel.sha256:
        partial.unlink(missing_ok=True)
        raise UserError(
            f"{wheel.pin}: {wheel.filename} arrived as {size} bytes, sha256 "
            f"{digest.hexdigest()}; the index says {wheel.size} bytes, sha256 {wheel.sha256}"
        )
    partial.replace(target)
    return target


def _read_json(url: str, pin: str) -> dict[str, Any]:
    try:
        with _open(url, pin) as response:
            data = json.loads(response.read())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexLookupError(f"{pin}: {url} is not JSON: {exc}") from None
    except OSError as exc:
        raise IndexLookupError(f"{pin}: cannot look it up at {url}: {_reason(exc)}") from None
    if not isinstance(data, dict):
        raise IndexLookupError(f"{pin}: {url} is not a project description")
    return data


def _open(url: str, pin: str) -> Any:
    if not url.startswith(("https://", "http://", "file://")):
        raise UserError(f"{pin}: refusing to fetch {url!r} (not an http(s) or file URL)")
    return urllib.request.urlopen(url, timeout=_TIMEOUT_S)  # the schemes are checked above


def _reason(exc: OSError) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc)
