"""A run folder on disk: created or reopened, and locked against a second writer.

The lock is an exclusive `flock` on RUN_DIR/.edgebench.lock, held for the whole run.
The kernel drops it when the process dies however it dies (SIGKILL, power cut), so a
lock file left behind is stale by construction and the next run takes it over; the
file's content (pid, host, start time) names the holder when the lock is busy.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
import stat
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.failures import is_disk_full
from edgebench.io import WriteFailed, json_line, write_json_atomic
from edgebench.readback import decode_json
from edgebench.runfolder.read import FIDELITY, MANIFEST, SAMPLES, SUMMARY, read_manifest
from edgebench.runfolder.records import FidelityRecord, Manifest, Summary
from edgebench.system.versions import utc_now

LOCK_FILE = ".edgebench.lock"
# Room held on the disk while a run writes, given back for the manifest's last write: a
# disk that fills up mid-run still gets the manifest that says how the run ended.
RESERVE_FILE = ".edgebench.reserve"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


class RunLock:
    """Exclusive use of one run folder by one process (see the module docstring)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None
        self.stale: dict[str, Any] | None = None  # who held it last, if they died

    def acquire(self) -> RunLock:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a full disk or not: the engine says what to do
            raise WriteFailed(self.path, exc) from None
        _check_regular_lock(fd, self.path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe_holder(_read_holder(fd))
            os.close(fd)
            raise UserError(
                f"{self.path.parent} is in use by another edgebench run ({holder}); "
                "wait for it to finish or stop it first"
            ) from None
        except OSError:  # no flock here (some network file systems): trust the pid
            holder = _read_holder(fd)
            if holder and _alive_here(holder):
                os.close(fd)
                raise UserError(
                    f"{self.path.parent} is in use by another edgebench run "
                    f"({_describe_holder(holder)})"
                ) from None
        self.stale = _read_holder(fd) or None
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": utc_now()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json_line(me).encode(), 0)
        except OSError as exc:  # a full disk: not locked, no lock file left behind
            with contextlib.suppress(OSError):
                self.path.unlink()
            os.close(fd)
            raise WriteFailed(self.path, exc) from None
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)  # closing drops the flock
        self._fd = None


def _check_regular_lock(fd: int, path: Path) -> None:
    """A copied folder's lock file that is a FIFO or a link to a device is refused (the
    lock is truncated and written: neither takes it)."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UserError(f"{path}: the run lock is not a regular file; remove it to continue")


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8") or "{}"
        data = decode_json(text, "lock file")  # bounded: the lock of a copied folder
    except (OSError, UnicodeDecodeError, UserError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe_holder(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown"
    return f"pid {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')}"


def _alive_here(holder: dict[str, Any]) -> bool:
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return True  # cannot tell for another machine: assume it is running
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunFolder:
    """The folder of one run, locked while this object is open."""

    def __init__(self, path: Path, lock: RunLock) -> None:
        self.path = path
        self.lock = lock

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def samples_path(self) -> Path:
        return self.path / SAMPLES

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    @classmethod
    def create(cls, out: Path | None, model_label: str, task: str, started: str) -> RunFolder:
        """A new run folder: `out` (new or empty), else runs/<time>-<model>-<task>."""
        if out is not None:
            run_dir = out
            if run_dir.exists() and not run_dir.is_dir():
                raise UserError(f"--out {run_dir} is a file, not a folder")
            try:
                run_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a full disk or not: the engine says what to do
                raise WriteFailed(run_dir, exc) from None
            lock = RunLock(run_dir).acquire()
            if any(p.name != LOCK_FILE for p in run_dir.iterdir()):
                lock.release()
                hint = " or continue it with --resume" if (run_dir / MANIFEST).exists() else ""
                raise UserError(f"output folder {run_dir} is not empty; choose another --out{hint}")
            return cls(run_dir, lock)
        stamp = started.replace(":", "").replace("-", "").replace("+0000", "")[:15]
        base = Path("runs") / f"{stamp}-{_slug(model_label)}-{task}"
        base.parent.mkdir(parents=True, exist_ok=True)
        run_dir, suffix = base, 1
        while True:  # mkdir claims a name atomically, so two runs never share one
            try:
                run_dir.mkdir()
                break
            except FileExistsError:
                suffix += 1
                run_dir = base.with_name(f"{base.name}~{suffix}")
        try:
            return cls(run_dir, RunLock(run_dir).acquire())
        except BaseException:  # a full disk: the folder this made goes again
            with contextlib.suppress(OSError):
                run_dir.rmdir()
            raise

    @classmethod
    def reopen(cls, run_dir: Path) -> RunFolder:
        """An existing run folder, for --resume."""
        read_manifest(run_dir)  # a clear error before taking the lock
        return cls(run_dir, RunLock(run_dir).acquire())

    def write_manifest(self, manifest: Manifest, *, last: bool = False) -> None:
        """manifest.json, atomically. `last`: the write that says how the run ended; on
        a full disk the room `reserve` held is given back for it."""
        try:
            write_json_atomic(self.manifest_path, manifest.to_json())
        except OSError as exc:
            if not (last and is_disk_full(exc) and self._give_back()):
                raise
            write_json_atomic(self.manifest_path, manifest.to_json())

    def reserve(self, nbytes: int) -> None:
        """Hold up to `nbytes` of the disk for the manifest's last write (as much as
        there is, on a disk nearly full; nothing, where nothing can be written)."""
        path = self.path / RESERVE_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError:
            return
        try:
            block = bytes(4096)
            while nbytes > 0:
                nbytes -= os.write(fd, block[: min(nbytes, len(block))])
        except OSError:
            pass  # what was written is the reserve
        finally:
            os.close(fd)

    def _give_back(self) -> bool:
        try:
            (self.path / RESERVE_FILE).unlink()
        except OSError:
            return False
        return True

    def write_summary(self, summary: Summary) -> None:
        write_json_atomic(self.summary_path, summary.to_json())

    def write_fidelity(self, record: FidelityRecord) -> None:
        write_json_atomic(self.path / FIDELITY, record.to_json())

    def release(self) -> None:
        self._give_back()
        self.lock.release()
