"""`edgebench db ingest`: run folders into the database, each validated first, each
stored in one transaction. Idempotent: a run is keyed by run id + device fingerprint;
the same files again change nothing, changed files (a `--resume` that grew the run, a
re-score) replace all of its rows."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from edgebench.db.rows import Row, RunRows, run_rows
from edgebench.db.schema import RUN_TABLES, db_problem
from edgebench.db.validate import check_run_folder
from edgebench.errors import UserError
from edgebench.runfolder.identity import identity_of
from edgebench.runfolder.read import FIDELITY, MANIFEST, POWER_LOG, SAMPLES, SUMMARY, TIMELINE
from edgebench.summary import load_run

# The files of a run folder kept verbatim: everything compare, card and report read.
RUN_FILES = (MANIFEST, SAMPLES, SUMMARY, FIDELITY, TIMELINE, POWER_LOG)

Outcome = Literal["added", "replaced", "unchanged", "refused"]


@dataclass(frozen=True)
class Ingested:
    folder: Path
    outcome: Outcome
    detail: str  # the run key, or why the folder was refused


def find_runs(path: Path) -> list[Path]:
    """The run folders `path` names: itself when it holds a manifest.json, else every
    folder under it that does (a plan's or a fleet's results), in path order."""
    if not path.exists():
        raise UserError(f"{path}: no such folder")
    if not path.is_dir():
        raise UserError(f"{path}: a file, not a run folder or a folder of run folders")
    if (path / MANIFEST).is_file():
        return [path]
    found = sorted(p.parent for p in path.rglob(MANIFEST) if p.is_file())
    if not found:
        raise UserError(f"{path}: no run folders under it (no {MANIFEST} found)")
    return found


def run_files(run_dir: Path) -> dict[str, bytes]:
    """The run's files that exist, as bytes."""
    files = {}
    for name in RUN_FILES:
        path = run_dir / name
        if path.is_file():
            try:
                files[name] = path.read_bytes()
            except OSError as exc:
                raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    return files


def content_hash(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{len(files[name])}\0".encode())
        digest.update(files[name])
    return digest.hexdigest()


def _insert(conn: sqlite3.Connection, table: str, rows: list[Row]) -> None:
    if not rows:
        return
    columns = list(rows[0])
    marks = ", ".join("?" * len(columns))
    conn.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
        [tuple(row[c] for c in columns) for row in rows],
    )


def _upsert_device(conn: sqlite3.Connection, row: Row) -> None:
    columns = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "fingerprint")
    conn.execute(
        f"INSERT INTO devices ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT (fingerprint) DO UPDATE SET {updates}",
        tuple(row.values()),
    )


def _store(conn: sqlite3.Connection, rows: RunRows, files: dict[str, bytes]) -> None:
    run_key = rows.run["run_key"]
    for table in RUN_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE run_key = ?", (run_key,))
    _upsert_device(conn, rows.device)
    _insert(conn, "runs", [rows.run])
    _insert(conn, "arms", rows.arms)
    _insert(conn, "arm_metrics", rows.arm_metrics)
    _insert(conn, "samples", rows.samples)
    _insert(conn, "sample_scores", rows.sample_scores)
    _insert(
        conn,
        "run_files",
        [{"run_key": run_key, "name": n, "content": data} for n, data in files.items()],
    )


def ingest_one(conn: sqlite3.Connection, run_dir: Path) -> Ingested:
    """Store one run folder (or leave it, unchanged); a UserError when it is refused."""
    check_run_folder(run_dir)
    files = run_files(run_dir)
    run = load_run(run_dir)
    manifest = run.manifest
    identity = identity_of(manifest.device)
    run_key = f"{manifest.run_id}@{identity.fingerprint}"
    digest = content_hash(files)
    stored = conn.execute("SELECT content_sha256 FROM runs WHERE run_key = ?", (run_key,))
    previous = stored.fetchone()
    if previous is not None and previous[0] == digest:
        return Ingested(run_dir, "unchanged", run_key)
    run_row = {
        "run_key": run_key,
        "run_id": manifest.run_id,
        "device": identity.fingerprint,
        "device_name": identity.name,
        "folder": str(run_dir.resolve()),
        "label": run_dir.resolve().name,
        "kind": manifest.kind,
        "task": manifest.task.name,
        "task_family": manifest.task_family,
        "dataset_sha256": manifest.dataset.sha256,
        "status": manifest.status,
        "schema_version": manifest.schema_version,
        "started_at": manifest.started_at,
        "finished_at": manifest.finished_at,
        "edgebench_version": manifest.packages.get("edgebench"),
        "content_sha256": digest,
    }
    rows = run_rows(run, identity, run_key, run_row)
    conn.execute("BEGIN IMMEDIATE")
    try:
        _store(conn, rows, files)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return Ingested(run_dir, "added" if previous is None else "replaced", run_key)


def ingest(conn: sqlite3.Connection, paths: list[Path]) -> Iterator[Ingested]:
    """Each run folder of `paths` stored, one result at a time; a folder that does not
    validate or read is `refused` with its one-line reason and the others go on. A
    database that fails (locked, corrupt) stops the whole ingest with one line."""
    folders = [folder for path in paths for folder in find_runs(path)]
    for folder in folders:
        try:
            yield ingest_one(conn, folder)
        except UserError as exc:
            yield Ingested(folder, "refused", str(exc))
        except sqlite3.Error as exc:
            raise UserError(f"{folder}: not stored: {db_problem(exc)}") from None
