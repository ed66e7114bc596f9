"""Runs stored in the database, written back out as run folders (and bench files as
files): `compare`, `card` and `report` then read them exactly as they read what was
ingested (the same files, byte for byte, under the same last path parts, so the same
row labels)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path, PurePath

from edgebench.db.ingest import RUN_FILES
from edgebench.db.schema import db_problem, open_db
from edgebench.errors import UserError
from edgebench.readback import MAX_DOCUMENT_BYTES, MAX_JSONL_BYTES
from edgebench.runfolder.read import read_bench, read_fidelity, read_run, read_summary

# the device by its name or any id of its identity
_DEVICE = (
    "(device_name = ? OR device IN (SELECT fingerprint FROM devices WHERE "
    "fingerprint = ? OR unit_id = ? OR model_id = ?))"
)


def _where(device: str | None, run: str | None, names: str) -> tuple[str, list[str]]:
    """The SQL condition selecting `device`'s entries named `run` (`names`: the columns
    a name may match), and its parameters."""
    clauses, params = [], []
    if device is not None:
        clauses.append(_DEVICE)
        params += [device] * 4
    if run is not None:
        columns = names.split(",")
        clauses.append("(" + " OR ".join(f"{c} = ?" for c in columns) + ")")
        params += [run] * len(columns)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _mirror(root: Path, where: str) -> Path:
    """`where`'s path under `root` (its anchor dropped)."""
    parts = [part for part in PurePath(where).parts[1:] if part not in ("", ".", "..")]
    return root.joinpath(*parts) if parts else root / "run"


def _unique(target: Path, taken: set[Path], key: str) -> Path:
    """`target`, or beside it with the device when the same path came from two devices."""
    if target in taken:
        target = target.with_name(f"{target.name}@{key.rsplit('@')[-1]}")
    taken.add(target)
    return target


def _write_runs(
    conn: sqlite3.Connection, db: Path, root: Path, device: str | None, run: str | None
) -> list[Path]:
    where, params = _where(device, run, "run_id,label")
    query = f"SELECT run_key, folder FROM runs{where} ORDER BY folder, run_id"
    folders: list[Path] = []
    taken: set[Path] = set()
    for run_key, folder in conn.execute(query, params).fetchall():
        where = f"{db}: run {folder!r}" if _odd(folder) else f"{db}: run {folder}"
        if not isinstance(run_key, str) or not isinstance(folder, str) or "\0" in folder:
            raise UserError(f"{where}: not a run of this edgebench (its key or folder is not text)")
        target = _unique(_mirror(root, folder), taken, run_key)
        target.mkdir(parents=True)
        files = conn.execute("SELECT name, content FROM run_files WHERE run_key = ?", (run_key,))
        for name, content in files:
            if name in RUN_FILES:  # never a path the database makes up
                if not isinstance(content, bytes):
                    raise UserError(
                        f"{where}: {name}: stored as {type(content).__name__}, not bytes"
                    )
                limit = MAX_JSONL_BYTES if name.endswith(".jsonl") else MAX_DOCUMENT_BYTES
                if len(content) > limit:
                    raise UserError(f"{where}: {name}: larger than the run-file limit")
                # a throwaway folder read once: no atomic write needed
                (target / name).write_bytes(content)
        _check_readable(target, where)
        folders.append(target)
    return folders


def _check_readable(target: Path, where: str) -> None:
    """The stored run read back as a folder of it would be, through the bounded reader,
    now: a problem then names the database, the run and the stored file, not the
    throwaway folder the command reads."""
    try:
        read_run(target)
        read_summary(target)
        read_fidelity(target)
    except UserError as exc:
        raise UserError(str(exc).replace(f"{target}{os.sep}", f"{where}: stored ")) from None


def _write_benches(
    conn: sqlite3.Connection, db: Path, root: Path, device: str | None, run: str | None
) -> list[Path]:
    where, params = _where(device, run, "label")
    query = (
        "SELECT bench_key, file, content FROM benches JOIN bench_files USING (bench_key)"
        f"{where} ORDER BY file"
    )
    files: list[Path] = []
    taken: set[Path] = set()
    for bench_key, file, content in conn.execute(query, params).fetchall():
        shown = f"{file!r}" if _odd(file) else file
        if not (
            isinstance(bench_key, str)
            and isinstance(file, str)
            and "\0" not in file
            and isinstance(content, bytes)
        ):
            raise UserError(
                f"{db}: bench {shown}: not a bench file of this edgebench (wrong types)"
            )
        if len(content) > MAX_DOCUMENT_BYTES:
            raise UserError(f"{db}: bench {shown}: larger than the bench-file limit")
        target = _unique(_mirror(root, file), taken, bench_key)
        if target.suffix != ".json":
            target = target.with_name(target.name + ".json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        try:  # read now, as a stored run is: the error names the database, not the copy
            read_bench(target)
        except UserError as exc:
            raise UserError(str(exc).replace(str(target), f"{db}: stored bench {shown}")) from None
        files.append(target)
    return files


def _odd(name: object) -> bool:
    """A stored name that would not print as one readable line (a NUL, a line break)."""
    return not isinstance(name, str) or not name.isprintable()


def write_runs(
    db: Path,
    root: Path,
    device: str | None = None,
    run: str | None = None,
    benches: bool = False,
) -> list[Path]:
    """Every run of `db` (those of `device` and/or named `run` when given) as a run
    folder under `root`, in the order of their ingested paths; with `benches`, the bench
    files after them."""
    conn = open_db(db)
    try:
        written = _write_runs(conn, db, root / "runs", device, run)
        if benches:
            written += _write_benches(conn, db, root / "benches", device, run)
    except sqlite3.Error as exc:
        raise UserError(f"{db}: {db_problem(exc)}") from None
    except OSError as exc:  # a stored folder name this file system cannot hold
        raise UserError(f"{db}: a stored run cannot be written out ({exc.strerror})") from None
    finally:
        conn.close()
    if not written:
        what = " and ".join(
            t for t in (device and f"device {device!r}", run and f"run {run!r}") if t
        )
        raise UserError(f"{db}: no runs" + (f" of {what}" if what else " in it"))
    return written
