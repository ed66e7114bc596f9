"""A host's fetched results tarball replaces OUT/<host> only when it is complete and
valid: crafted tarballs (no results/, results/ a file, links out of the host's folder,
devices, truncated archives) leave the old results exactly as they were, and the host is
reported failed with the reason; a swap cut short is put right at the next unpack."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from edgebench.fleet import unpack
from edgebench.fleet.drive import _collect
from edgebench.fleet.status import COMPLETE, FAILED, HostState
from edgebench.fleet.unpack import Refused, checked_members, recover, unpack_results

OLD = {"runs/c1/summary.json": "old summary", "plan-status.json": "{}"}


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x", link: str = ""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, (data if kind == tarfile.REGTYPE else None)


def tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def folder_state(folder: Path) -> dict[str, str]:
    """Every entry under `folder`: a file's text, a link's target, `/` for a folder."""
    state = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            state[rel] = "-> " + str(path.readlink())
        elif path.is_dir():
            state[rel] = "/"
        else:
            state[rel] = path.read_text()
    return state


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """OUT with host `a`'s results from an earlier fleet run."""
    host = tmp_path / "out" / "a"
    for name, text in OLD.items():
        (host / name).parent.mkdir(parents=True, exist_ok=True)
        (host / name).write_text(text)
    return tmp_path / "out"


def collect(tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]):
    incoming = tmp_path / "incoming"
    incoming.mkdir(exist_ok=True)
    tarball(incoming / "a.tar.gz", members)
    return _collect(HostState("a", COMPLETE), incoming, tmp_path / "out", tmp_path)


GOOD = [
    member("results", tarfile.DIRTYPE),
    member("results/runs", tarfile.DIRTYPE),
    member("results/runs/c1", tarfile.DIRTYPE),
    member("results/runs/c1/summary.json", data=b"new summary"),
]

HOSTILE = {
    "no results folder": (
        [member("other/x"), member("results.txt")],
        "no results/ folder in it",
    ),
    "results a file": ([member("results", data=b"not a folder")], "results is a file"),
    "results a link": (
        [member("results", tarfile.SYMTYPE, link="/etc")],
        "results is a link, not a folder",
    ),
    "a link up to OUT": (
        [*GOOD, member("results/up", tarfile.SYMTYPE, link="..")],
        "results/up -> ..: a link outside the host's folder",
    ),
    "a deeper link up to OUT": (
        [*GOOD, member("results/runs/c1/up", tarfile.SYMTYPE, link="../../../b")],
        "a link outside the host's folder",
    ),
    "an absolute link": (
        [*GOOD, member("results/etc", tarfile.SYMTYPE, link="/etc/passwd")],
        "a link outside the host's folder",
    ),
    "a link through a link to the host's own folder": (
        [
            *GOOD,
            member("results/here", tarfile.SYMTYPE, link="."),
            member("results/up", tarfile.SYMTYPE, link="here/.."),
        ],
        "results/up -> here/..: a link through another link",
    ),
    "a member inside a link": (
        [
            *GOOD,
            member("results/d", tarfile.SYMTYPE, link="runs"),
            member("results/d/up", tarfile.SYMTYPE, link=".."),
        ],
        "results/d/up: inside a link",
    ),
    "a hard link out of results": (
        [*GOOD, member("results/pw", tarfile.LNKTYPE, link="etc/passwd")],
        "results/pw => etc/passwd: a hard link to no file of the host's folder",
    ),
    "a hard link upwards": (
        [*GOOD, member("results/pw", tarfile.LNKTYPE, link="results/../../x")],
        "a hard link to no file of the host's folder",
    ),
    "a dotted path": (
        [*GOOD, member("results/../../escaped.txt")],
        "results/../../escaped.txt: a path outside the results folder",
    ),
    "an absolute path": (
        [*GOOD, member("/results/x")],
        "/results/x: a path outside the results folder",
    ),
    "a device": (
        [*GOOD, member("results/null", tarfile.CHRTYPE)],
        "results/null: a device (only files, folders and links)",
    ),
    "a FIFO": (
        [*GOOD, member("results/fifo", tarfile.FIFOTYPE)],
        "results/fifo: a FIFO",
    ),
    "a name twice as file and link": (
        [*GOOD, member("results/x"), member("results/x", tarfile.SYMTYPE, link="..")],
        "results/x: in the tarball twice",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_tarball_keeps_the_old_results_exactly_and_fails_the_host(
    tmp_path: Path, out: Path, case: str
) -> None:
    members, why = HOSTILE[case]
    before = folder_state(out / "a")
    result = collect(tmp_path, members)
    assert result.state.state == FAILED
    assert result.state.reason.startswith("its results could not be unpacked (")
    assert why in result.state.reason
    assert result.state.reason.endswith("; the results fetched before are kept")
    assert folder_state(out / "a") == before
    assert sorted(p.name for p in out.iterdir()) == ["a"]  # no .a.old, no staging
    assert result.folder == out / "a"
    assert not (tmp_path / "escaped.txt").exists() and not (out / "escaped.txt").exists()


def test_a_hostile_tarball_with_no_results_before_leaves_no_folder(tmp_path: Path) -> None:
    result = collect(tmp_path, [member("results", data=b"a file")])
    assert result.state.state == FAILED and result.folder is None
    assert "results is a file, not a folder" in result.state.reason
    assert "kept" not in result.state.reason
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_a_truncated_tarball_keeps_the_old_results(tmp_path: Path, out: Path, cut: float) -> None:
    big = member("results/runs/c1/samples.jsonl", data=bytes(range(256)) * 4000)
    whole = tarball(tmp_path / "whole.tar.gz", [*GOOD, big]).read_bytes()
    before = folder_state(out / "a")
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    (incoming / "a.tar.gz").write_bytes(whole[: int(len(whole) * cut)])
    result = _collect(HostState("a", COMPLETE), incoming, out, tmp_path)
    assert result.state.state == FAILED, result.state
    assert "could not be unpacked" in result.state.reason
    assert folder_state(out / "a") == before
    assert sorted(p.name for p in out.iterdir()) == ["a"]


def test_a_garbage_file_is_not_a_tarball(tmp_path: Path, out: Path) -> None:
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    (incoming / "a.tar.gz").write_bytes(b"\x1f\x8b garbage")
    before = folder_state(out / "a")
    result = _collect(HostState("a", COMPLETE), incoming, out, tmp_path)
    assert result.state.state == FAILED and "could not be unpacked" in result.state.reason
    assert folder_state(out / "a") == before


def test_a_valid_tarball_replaces_the_old_results_whole(tmp_path: Path, out: Path) -> None:
    links = [
        member("results/runs/latest", tarfile.SYMTYPE, link="c1"),
        member("results/runs/c1/copy.json", tarfile.LNKTYPE, link="results/runs/c1/summary.json"),
        member("results/top", tarfile.SYMTYPE, link="runs/c1/../c1/summary.json"),
    ]
    result = collect(tmp_path, [*GOOD, *links, member("other/ignored")])
    assert result.state.state == COMPLETE, result.state.reason
    assert folder_state(out / "a") == {
        "runs": "/",
        "runs/c1": "/",
        "runs/c1/copy.json": "new summary",
        "runs/c1/summary.json": "new summary",
        "runs/latest": "-> c1",
        "top": "-> runs/c1/../c1/summary.json",
    }
    assert sorted(p.name for p in out.iterdir()) == ["a"]


def test_a_tarball_of_files_only_implies_its_folders(tmp_path: Path) -> None:
    """tar of single files writes no folder entries: results/ is implied by its members."""
    result = collect(tmp_path, [member("results/runs/c1/summary.json", data=b"s")])
    assert result.state.state == COMPLETE
    assert (tmp_path / "out" / "a" / "runs" / "c1" / "summary.json").read_text() == "s"


def test_a_swap_cut_short_is_put_right_at_the_next_unpack(tmp_path: Path, out: Path) -> None:
    # cut after the old copy was moved aside, before the new one arrived
    before = folder_state(out / "a")
    (out / "a").rename(out / ".a.old")
    recover(out / "a")
    assert folder_state(out / "a") == before and not (out / ".a.old").exists()
    # cut after the new copy arrived, before the old one was removed
    (out / ".a.old").mkdir()
    unpack_results(tarball(tmp_path / "t.tar.gz", GOOD), out / "a")
    assert folder_state(out / "a")["runs/c1/summary.json"] == "new summary"
    assert sorted(p.name for p in out.iterdir()) == ["a"]


def test_a_refused_tarball_after_a_cut_swap_still_brings_the_old_results_back(
    tmp_path: Path, out: Path
) -> None:
    before = folder_state(out / "a")
    (out / "a").rename(out / ".a.old")
    with pytest.raises(Refused):
        unpack_results(tarball(tmp_path / "t.tar.gz", [member("x")]), out / "a")
    assert folder_state(out / "a") == before and not (out / ".a.old").exists()


def test_a_disk_that_fills_while_unpacking_keeps_the_old_results(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tarfile.TarFile, "makefile", full)
    before = folder_state(out / "a")
    result = collect(tmp_path, GOOD)
    assert result.state.state == FAILED
    assert "No space left on device" in result.state.reason
    assert folder_state(out / "a") == before
    assert sorted(p.name for p in out.iterdir()) == ["a"]


def test_members_outside_results_are_left_out() -> None:
    kept = checked_members([m for m, _ in [*GOOD, member("other/../x"), member("./results/y")]])
    assert [m.name for m in kept] == [m.name for m, _ in GOOD] + ["./results/y"]


def test_unpacked_folders_and_files_stay_the_users_to_replace(tmp_path: Path) -> None:
    locked = member("results/runs", tarfile.DIRTYPE)
    locked[0].mode = 0o000
    secret = member("results/runs/s.json", data=b"{}")
    secret[0].mode = 0o000
    result = collect(tmp_path, [member("results", tarfile.DIRTYPE), locked, secret])
    assert result.state.state == COMPLETE
    host = tmp_path / "out" / "a"
    assert (host / "runs").stat().st_mode & 0o700 == 0o700
    assert (host / "runs" / "s.json").stat().st_mode & 0o600 == 0o600
    assert collect(tmp_path, GOOD).state.state == COMPLETE  # and the next unpack replaces it


def _keeps_old(tmp_path: Path, out: Path, data: bytes, why: str) -> None:
    """A tarball of bytes `data` fails the host with `why` in one line, the old results
    exactly as they were, nothing beside them."""
    incoming = tmp_path / "incoming"
    incoming.mkdir(exist_ok=True)
    (incoming / "a.tar.gz").write_bytes(data)
    before = folder_state(out / "a")
    result = _collect(HostState("a", COMPLETE), incoming, out, tmp_path)
    assert result.state.state == FAILED, result.state
    assert why in result.state.reason and "\n" not in result.state.reason, result.state.reason
    assert folder_state(out / "a") == before
    assert sorted(p.name for p in out.iterdir()) == ["a"]


def test_a_damaged_gzip_stream_is_caught_by_its_checksum(tmp_path: Path, out: Path) -> None:
    """tarfile stops at the archive's end marker and never reads the gzip checksum: bytes
    changed inside the stream unpacked as a 'complete' host (a file lost, the old results
    gone). The stream is now read to its end."""
    whole = tarball(tmp_path / "whole.tar.gz", GOOD).read_bytes()
    crc = int.from_bytes(whole[-8:-4], "little")  # the trailer: CRC32 and length
    damaged = whole[:-8] + (crc ^ 1).to_bytes(4, "little") + whole[-4:]
    _keeps_old(tmp_path, out, damaged, "CRC check failed")


@pytest.mark.parametrize("data", [b"", b"garbage that is no archive", bytes(10)])
def test_a_file_that_is_not_a_tarball_is_one_line(tmp_path: Path, out: Path, data: bytes) -> None:
    """tarfile's error lists every compression it tried, a line each: the host's reason
    (a cell of the fleet table) stays one line."""
    _keeps_old(tmp_path, out, data, "could not be unpacked (")


def test_a_tarball_of_too_many_members_is_refused_as_it_is_read(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tarball bomb: 300,000 empty files in a 2 MB tarball took 95 s and 350 MB to
    unpack; members are counted as they are read and refused past MAX_MEMBERS."""
    monkeypatch.setattr(unpack, "MAX_MEMBERS", 5)
    many = [member(f"results/f{n}", data=b"") for n in range(6)]
    data = tarball(tmp_path / "many.tar.gz", many).read_bytes()
    _keeps_old(tmp_path, out, data, "more than 5 members")
    assert collect(tmp_path, many[:5]).state.state == COMPLETE


def test_a_tarball_bigger_than_the_free_disk_is_refused_before_unpacking(
    tmp_path: Path, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tarball bomb by size (a few KB of gzip for GBs of zeros): its members' sizes are
    added up from the headers and checked against the free room first."""
    real = unpack.shutil.disk_usage
    room = unpack.SPARE_BYTES + 100_000
    monkeypatch.setattr(unpack.shutil, "disk_usage", lambda p: real(p)._replace(free=room))
    big = member("results/runs/c1/samples.jsonl", data=bytes(200_000))
    data = tarball(tmp_path / "big.tar.gz", [*GOOD, big]).read_bytes()
    _keeps_old(tmp_path, out, data, "MiB, more than the 0 MiB free in")
    assert collect(tmp_path, GOOD).state.state == COMPLETE
