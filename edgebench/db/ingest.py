"""`edgebench db ingest`: run folders (and bench files) into the database, each
validated first, each stored in one transaction. Idempotent: a run is keyed by run id +
device fingerprint, a bench file by its start time + device fingerprint; the same files
again change nothing, changed files (a `--resume` that grew the run, a re-score) replace
all of its rows."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from edgebench.db.bench import bench_row, bench_rows, find_benches, read_bench_record
from edgebench.db.rows import Row, RunRows, device_row, run_rows
from edgebench.db.schema import BENCH_TABLES, RUN_TABLES, db_problem, is_full
from edgebench.db.validate import check_bench_file, check_run_folder
from edgebench.errors import RunFailure, UserError
from edgebench.readback import MAX_DOCUMENT_BYTES, MAX_JSONL_BYTES, present, read_bytes
from edgebench.runfolder.identity import identity_of
from edgebench.runfolder.read import (
    FIDELITY,
    MANIFEST,
    POWER_LOG,
    SAMPLES,
    SUMMARY,
    TIMELINE,
    read_manifest,
)
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
    if not path.is_dir():
        return []
    # a manifest that is there but not a regular file (a FIFO, a link to a device) makes
    # a run folder all the same: it is then refused in one line, not passed over
    if present(path / MANIFEST):
        return [path]
    return sorted(p.parent for p in path.rglob(MANIFEST) if not p.is_dir())


def find_sources(path: Path) -> tuple[list[Path], list[Path]]:
    """The run folders and bench files `path` names, or a one-line error when none."""
    if not path.exists():
        raise UserError(f"{path}: no such folder")
    runs, benches = find_runs(path), find_benches(path)
    if path.is_file() and not benches:
        raise UserError(f"{path}: a file, not a run folder, a folder of them or a bench file")
    if not runs and not benches:
        raise UserError(f"{path}: no run folders under it (no {MANIFEST} found)")
    return runs, benches


def run_files(run_dir: Path) -> dict[str, bytes]:
    """The run's files that exist, as bytes."""
    files = {}
    for name in RUN_FILES:
        path = run_dir / name
        if present(path):  # a FIFO or a device there is refused, not skipped
            limit = MAX_JSONL_BYTES if name.endswith(".jsonl") else MAX_DOCUMENT_BYTES
            files[name] = read_bytes(path, "run file", limit)
    return files


def content_hash(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{len(files[name])}\0".encode())
        digest.update(files[name])
    return digest.hexdigest()


def _storable(value: object) -> object:
    """A value SQLite can take: a string holding a lone surrogate (a name read back as
    "\\ud800", a byte of a path that was not UTF-8) stored with it escaped; SQLite
    cannot encode it, and the whole ingest ended in a UnicodeEncodeError."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _params(values: Iterable[object]) -> tuple[object, ...]:
    return tuple(_storable(value) for value in values)


def _insert(conn: sqlite3.Connection, table: str, rows: list[Row]) -> None:
    if not rows:
        return
    columns = list(rows[0])
    marks = ", ".join("?" * len(columns))
    conn.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
        [_params(row[c] for c in columns) for row in rows],
    )


def _upsert_device(conn: sqlite3.Connection, row: Row) -> None:
    columns = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "fingerprint")
    conn.execute(
        f"INSERT INTO devices ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT (fingerprint) DO UPDATE SET {updates}",
        _params(row.values()),
    )


def _stored_hash(conn: sqlite3.Connection, table: str, key: str, value: str) -> str | None:
    row = conn.execute(f"SELECT content_sha256 FROM {table} WHERE {key} = ?", _params([value]))
    found = row.fetchone()
    return None if found is None else found[0]


def _transaction(
    conn: sqlite3.Connection,
    table: str,
    key: str,
    value: str,
    digest: str,
    store: Callable[[], None],
) -> Outcome:
    """`store` in one write transaction, unless the stored content is `digest` already;
    the check is made again inside it, so two ingests at once store a run once."""
    if _stored_hash(conn, table, key, value) == digest:  # no write lock for the common case
        return "unchanged"
    conn.execute("BEGIN IMMEDIATE")
    try:
        previous = _stored_hash(conn, table, key, value)
        if previous != digest:
            store()
        conn.execute("COMMIT")
    except BaseException:
        # SQLite ends the transaction itself on some errors (a full disk): a ROLLBACK
        # then fails with "cannot rollback" and would hide the real error.
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    if previous == digest:
        return "unchanged"
    return "added" if previous is None else "replaced"


def _clear(conn: sqlite3.Connection, tables: tuple[str, ...], key: str, value: str) -> None:
    for table in tables:
        conn.execute(f"DELETE FROM {table} WHERE {key} = ?", _params([value]))


def _store(conn: sqlite3.Connection, rows: RunRows, files: dict[str, bytes]) -> None:
    run_key = rows.run["run_key"]
    _clear(conn, RUN_TABLES, "run_key", run_key)
    _upsert_device(conn, rows.device)
    _insert(conn, "runs", [rows.run])
    _insert(conn, "arms", rows.arms)
    _insert(conn, "arm_metrics", rows.arm_metrics)
    _insert(conn, "arm_group_metrics", rows.arm_group_metrics)
    _insert(conn, "differences", rows.differences)
    _insert(conn, "samples", rows.samples)
    _insert(conn, "sample_scores", rows.sample_scores)
    _insert(
        conn,
        "run_files",
        [{"run_key": run_key, "name": n, "content": data} for n, data in files.items()],
    )


def ingest_one(conn: sqlite3.Connection, run_dir: Path) -> Ingested:
    """Store one run folder (or leave it, unchanged); a UserError when it is refused."""
    files = run_files(run_dir)
    digest = content_hash(files)
    # These very files stored already (their run key is made from them): not validated,
    # parsed or summarised again, the common case of ingesting a results folder again.
    stored = conn.execute("SELECT run_key FROM runs WHERE content_sha256 = ?", (digest,))
    same = stored.fetchone()
    if same is not None:
        return Ingested(run_dir, "unchanged", same[0])
    check_run_folder(run_dir)
    manifest = read_manifest(run_dir)
    identity = identity_of(manifest.device)
    run_key = f"{manifest.run_id}@{identity.fingerprint}"
    run = load_run(run_dir)
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
    outcome = _transaction(
        conn, "runs", "run_key", run_key, digest, lambda: _store(conn, rows, files)
    )
    return Ingested(run_dir, outcome, run_key)


def ingest_bench(conn: sqlite3.Connection, path: Path) -> Ingested:
    """Store one bench file (or leave it, unchanged); a UserError when it is refused."""
    check_bench_file(path)
    record = read_bench_record(path)
    identity = identity_of(record.device)
    bench_key = f"bench-{record.started_at}@{identity.fingerprint}"
    content = read_bytes(path, "bench file")
    digest = content_hash({path.name: content})

    def store() -> None:
        _clear(conn, BENCH_TABLES, "bench_key", bench_key)
        _upsert_device(conn, device_row(identity, record.device))
        _insert(conn, "benches", [bench_row(bench_key, path, record, identity, digest)])
        _insert(conn, "bench_rows", bench_rows(bench_key, record))
        _insert(conn, "bench_files", [{"bench_key": bench_key, "content": content}])

    outcome = _transaction(conn, "benches", "bench_key", bench_key, digest, store)
    return Ingested(path, outcome, bench_key)


def ingest(conn: sqlite3.Connection, paths: list[Path]) -> Iterator[Ingested]:
    """Each run folder of `paths` stored, one result at a time; a folder that does not
    validate or read is `refused` with its one-line reason and the others go on. A
    database that fails (locked, corrupt) stops the whole ingest with one line."""
    found = [find_sources(path) for path in paths]
    jobs = [(ingest_one, run) for runs, _ in found for run in runs]
    jobs += [(ingest_bench, bench) for _, benches in found for bench in benches]
    for store, source in jobs:
        try:
            yield store(conn, source)
        except UserError as exc:
            yield Ingested(source, "refused", str(exc))
        except sqlite3.Error as exc:
            if is_full(exc):
                raise RunFailure(
                    f"{source}: not stored: {db_problem(exc)}; what was stored before is "
                    "kept: free space, then run the same ingest again"
                ) from None
            raise UserError(f"{source}: not stored: {db_problem(exc)}") from None
