"""sha256 of model files, remembered in a small sidecar keyed by size and mtime.

Hashing a 250 MB model takes about a second; `models list` and every run would pay it
again. The sidecar is trusted only while the file's size and mtime are unchanged.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from edgebench.errors import UserError
from edgebench.io import json_line
from edgebench.paths import cache_dir, model_cache_dir
from edgebench.readback import read_json

CHUNK = 1 << 20


def sidecar_path(path: Path) -> Path:
    """Next to files in the model cache; for files elsewhere, in the cache's `hashes/`.

    A user's own model folder is never written to.
    """
    path = path.resolve()
    if path.parent == model_cache_dir().resolve():
        return path.with_name(path.name + ".sha256.json")
    key = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:24]
    return cache_dir() / "hashes" / f"{key}.json"


def _stamp(path: Path) -> dict[str, object]:
    st = path.stat()
    return {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def remembered_sha256(path: Path) -> str | None:
    """The sha256 recorded for `path`, if the file has not changed since."""
    try:
        record = read_json(sidecar_path(path), "hash sidecar")  # bounded: a cache is shared
        stamp = _stamp(path)
    except (OSError, UserError):
        return None
    if not isinstance(record, dict) or any(record.get(k) != v for k, v in stamp.items()):
        return None
    digest = record.get("sha256")
    return digest if isinstance(digest, str) else None


def remember_sha256(path: Path, digest: str) -> None:
    """Record `digest` for the file as it is now. Best effort: the cache may be read-only."""
    side = sidecar_path(path)
    try:
        side.parent.mkdir(parents=True, exist_ok=True)
        tmp = side.with_name(side.name + f".{os.getpid()}.tmp")
        tmp.write_text(json_line({**_stamp(path), "sha256": digest}), encoding="utf-8")
        os.replace(tmp, side)
    except OSError:
        pass


def hash_file(path: Path) -> str:
    """The file's sha256, computed (nothing remembered: for a file about to move)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def sha256_file(path: Path) -> str:
    """The file's sha256, from the sidecar when it is still valid, else computed."""
    digest = remembered_sha256(path)
    if digest is None:
        digest = hash_file(path)
        remember_sha256(path, digest)
    return digest
