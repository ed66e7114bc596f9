"""A host's fetched results tarball into OUT/<host>, all or nothing.

The tarball comes from a host, so nothing in it is trusted. Every member under
`results/` is checked before anything is written, against the folder it will end up in
(OUT/<host>, which is `results/` itself: a link `results/up -> ..` points at OUT, not
inside the host's folder, even though it stays inside the staging folder it is unpacked
in). Only then is it unpacked into a staging folder beside OUT/<host> and swapped in.
A tarball that is not complete and valid leaves the old OUT/<host> exactly as it was;
a swap cut short (Ctrl-C, a power cut) is put right at the next unpack.

Complete means the compressed stream read to its end: tarfile stops at the archive's
end marker and would never see a gzip checksum that does not match. Bounded means a
tarball bomb is refused before it is unpacked: at most MAX_MEMBERS members, counted as
they are read, and no more bytes than the disk has free.
"""

from __future__ import annotations

import contextlib
import shutil
import tarfile
import zlib
from collections.abc import Iterable
from pathlib import Path

RESULTS = "results"
# What a damaged or hostile tarball can raise while it is read or unpacked.
UNPACK_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error)
# A plan holds at most 10,000 cells of about ten files each: ten times that is a bomb
# (each member read costs memory and time: 300,000 empty files took 95 s to unpack).
MAX_MEMBERS = 200_000
# Room left on the disk after the unpacked results (the run lock, logs, the database).
SPARE_BYTES = 64 << 20


class Refused(Exception):
    """The tarball is not a complete, valid results folder: why, in one line."""


def unpack_results(tarball: Path, folder: Path) -> None:
    """The host's `results/` from `tarball` into `folder`, replacing the older copy only
    when the new one is complete and valid (Refused or one of UNPACK_ERRORS otherwise,
    the old copy untouched)."""
    recover(folder)
    staging = folder.with_name(f".{folder.name}.unpacking")
    _remove(staging)
    with tarfile.open(tarball) as tar:
        members = checked_members(_counted(tar))
        _check_room(members, folder.parent)
        staging.mkdir(parents=True)
        try:
            _extract(tar, members, staging)
            _read_to_end(tar)
            staged = staging / RESULTS
            if staged.is_symlink() or not staged.is_dir():
                raise Refused(f"{RESULTS} did not unpack as a folder")
            _swap(staged, folder)
        finally:
            _remove(staging)


def _counted(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The tarball's members, read one at a time: Refused past MAX_MEMBERS."""
    members = []
    for member in tar:
        members.append(member)
        if len(members) > MAX_MEMBERS:
            raise Refused(f"more than {MAX_MEMBERS:,} members (a tarball bomb?)")
    return members


def _check_room(members: list[tarfile.TarInfo], where: Path) -> None:
    """Refused when the members' bytes would not fit on the disk holding `where` (with
    SPARE_BYTES left): a tarball bomb, or a disk too full, caught before unpacking."""
    need = sum(m.size for m in members if m.isreg())
    while not where.exists() and where != where.parent:  # OUT is made by the unpack
        where = where.parent
    free = shutil.disk_usage(where).free
    if need + SPARE_BYTES > free:
        raise Refused(
            f"its files hold {need / (1 << 20):,.0f} MiB, more than the "
            f"{max(free - SPARE_BYTES, 0) / (1 << 20):,.0f} MiB free in {where}"
        )


def _read_to_end(tar: tarfile.TarFile) -> None:
    """The compressed stream read past the archive's end marker to its own end, so that
    gzip checks its checksum and length (a damaged stream: OSError or EOFError)."""
    while tar.fileobj is not None and tar.fileobj.read(1 << 20):
        pass


def checked_members(members: Iterable[tarfile.TarInfo]) -> list[tarfile.TarInfo]:
    """The members under `results/` to unpack, once every one is safe; Refused naming
    the first that is not (or when there is no `results` folder at all). Members
    outside `results/` are left out."""
    ours: list[tuple[tuple[str, ...], tarfile.TarInfo]] = []
    for member in members:
        parts = _parts(member.name)
        if parts and parts[0] == RESULTS:
            if member.name.startswith("/") or ".." in parts:
                raise Refused(f"{member.name}: a path outside the results folder")
            ours.append((parts[1:], member))
    if not ours:
        raise Refused(f"no {RESULTS}/ folder in it")
    links = {rel for rel, m in ours if m.issym()}
    regular = {rel for rel, m in ours if m.isreg()}
    kinds: dict[tuple[str, ...], str] = {}
    for rel, member in ours:
        name = "/".join((RESULTS, *rel))
        if not rel and not member.isdir():
            raise Refused(f"{RESULTS} is {_kind(member)}, not a folder")
        if not (member.isdir() or member.isreg() or member.issym() or member.islnk()):
            raise Refused(f"{name}: {_kind(member)} (only files, folders and links)")
        if kinds.setdefault(rel, _kind(member)) != _kind(member):
            raise Refused(f"{name}: in the tarball twice, as {kinds[rel]} and {_kind(member)}")
        if any(rel[:i] in links for i in range(1, len(rel))):
            raise Refused(f"{name}: inside a link")
        if member.issym():
            _check_symlink(name, rel, member.linkname, links)
        elif member.islnk():
            _check_hardlink(name, member.linkname, regular, links)
    return [member for _, member in ours]


def _check_symlink(
    name: str, rel: tuple[str, ...], target: str, links: set[tuple[str, ...]]
) -> None:
    """A symbolic link's target walked from its own folder inside the host's folder: it
    must stay inside, and not through another link (a `..` after a link is taken from
    wherever that link leads, which a walk by name cannot know)."""
    if not target or target.startswith("/"):
        raise Refused(f"{name} -> {target}: a link outside the host's folder")
    where = list(rel[:-1])
    steps = [p for p in target.split("/") if p not in ("", ".")]
    for n, step in enumerate(steps):
        if step == "..":
            if not where:
                raise Refused(f"{name} -> {target}: a link outside the host's folder")
            where.pop()
            continue
        where.append(step)
        if n < len(steps) - 1 and tuple(where) in links:
            raise Refused(f"{name} -> {target}: a link through another link")


def _check_hardlink(
    name: str, target: str, regular: set[tuple[str, ...]], links: set[tuple[str, ...]]
) -> None:
    """A hard link names a file of the tarball by its path there: a regular file under
    `results/`, reached through no link."""
    parts = _parts(target)
    rel = tuple(parts[1:])
    inside = bool(parts) and parts[0] == RESULTS and ".." not in parts
    if not inside or target.startswith("/") or rel not in regular:
        raise Refused(f"{name} => {target}: a hard link to no file of the host's folder")
    if any(rel[:i] in links for i in range(1, len(rel))):
        raise Refused(f"{name} => {target}: a hard link through a link")


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in name.split("/") if p not in ("", "."))


def _kind(member: tarfile.TarInfo) -> str:
    if member.isdir():
        return "a folder"
    if member.isreg():
        return "a file"
    if member.issym():
        return "a link"
    if member.islnk():
        return "a hard link"
    if member.isfifo():
        return "a FIFO"
    if member.ischr() or member.isblk():
        return "a device"
    return "an unknown kind of member"


def _extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], dest: Path) -> None:
    """The checked members into `dest`; tarfile's own data filter (where it has one) on
    top, which also drops special permission bits. Every folder and file stays the
    user's to read, write and remove (a folder stored as mode 000 would make the next
    unpack unable to replace this one)."""
    for member in members:
        if not member.issym():
            member.mode |= 0o700 if member.isdir() else 0o600
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, members=members, filter="data")
    else:  # Python < 3.11.4: the checks above are the only ones
        tar.extractall(dest, members=members)


def _swap(staged: Path, folder: Path) -> None:
    """`staged` in place of `folder`. The old copy is moved aside first and put back if
    the new one cannot take its place; `recover` finishes a swap that was cut short."""
    old = _aside(folder)
    if not (folder.exists() or folder.is_symlink()):
        staged.rename(folder)
        return
    folder.rename(old)
    try:
        staged.rename(folder)
    except BaseException:
        old.rename(folder)
        raise
    with contextlib.suppress(OSError):  # the new copy is in place: the old one is litter
        _remove(old)


def recover(folder: Path) -> None:
    """A swap cut short: the old copy put back when the new one never arrived, else the
    old copy (replaced already) removed."""
    old = _aside(folder)
    if not (old.exists() or old.is_symlink()):
        return
    if folder.exists() or folder.is_symlink():
        with contextlib.suppress(OSError):
            _remove(old)
    else:
        old.rename(folder)


def _aside(folder: Path) -> Path:
    return folder.with_name(f".{folder.name}.old")


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
