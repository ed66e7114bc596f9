"""Runs stored in the database, written back out as run folders: `compare`, `card` and
`report` then read them exactly as they read the folders that were ingested (the same
files, byte for byte, and the same folder names, so the same row labels)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path, PurePath

from edgebench.db.ingest import RUN_FILES
from edgebench.db.schema import db_problem, open_db
from edgebench.errors import UserError


@dataclass(frozen=True)
class StoredRun:
    run_key: str
    run_id: str
    device_name: str
    folder: str  # where it was ingested from
    label: str  # that folder's name


def _selected(conn: sqlite3.Connection, device: str | None, run: str | None) -> list[StoredRun]:
    query = "SELECT run_key, run_id, device_name, folder, label FROM runs"
    where, params = [], []
    if device is not None:  # the name, or any id of the device's identity
        where.append(
            "(device_name = ? OR device IN (SELECT fingerprint FROM devices WHERE "
            "fingerprint = ? OR unit_id = ? OR model_id = ?))"
        )
        params += [device] * 4
    if run is not None:
        where.append("(run_id = ? OR label = ?)")
        params += [run, run]
    if where:
        query += " WHERE " + " AND ".join(where)
    rows = conn.execute(query + " ORDER BY folder, run_id", params).fetchall()
    return [StoredRun(*row) for row in rows]


def _mirror(root: Path, folder: str) -> Path:
    """`folder`'s path under `root` (its anchor dropped): the same last parts, so the
    same row labels as the folder itself."""
    parts = [part for part in PurePath(folder).parts[1:] if part not in ("", ".", "..")]
    return root.joinpath(*parts) if parts else root / "run"


def write_runs(
    db: Path, root: Path, device: str | None = None, run: str | None = None
) -> list[Path]:
    """Every run of `db` (those of `device` and/or `run` when given) as a run folder under
    `root`, in the order of their ingested paths."""
    conn = open_db(db)
    try:
        stored = _selected(conn, device, run)
        if not stored:
            what = " and ".join(
                t for t in (device and f"device {device!r}", run and f"run {run!r}") if t
            )
            raise UserError(f"{db}: no runs" + (f" of {what}" if what else " in it"))
        folders = []
        for entry in stored:
            target = _mirror(root, entry.folder)
            if target in folders:  # the same folder ingested on two devices
                target = target.with_name(f"{target.name}@{entry.run_key.rsplit('@')[-1]}")
            target.mkdir(parents=True)
            files = conn.execute(
                "SELECT name, content FROM run_files WHERE run_key = ?", (entry.run_key,)
            )
            for name, content in files:
                if name in RUN_FILES:  # never a path the database makes up
                    # a throwaway folder read once: no atomic write needed
                    (target / name).write_bytes(content)
            folders.append(target)
        return folders
    except sqlite3.Error as exc:
        raise UserError(f"{db}: {db_problem(exc)}") from None
    finally:
        conn.close()
