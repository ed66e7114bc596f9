"""The database file: its tables, its version, and one-line errors for a file that is not
one of ours (not SQLite, corrupt, locked, made by a newer edgebench)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from edgebench.errors import RunFailure, UserError
from edgebench.readback import check_regular, present

# The database's own version (not the run-folder format): bumped when a table changes;
# an older database is brought up to it when opened (MIGRATIONS).
DB_VERSION = 3
DEFAULT_DB = Path("edgebench.db")
LOCK_WAIT_S = 5.0  # how long to wait for another writer before saying the file is locked
_SQLITE_MAGIC = b"SQLite format 3\x00"

# Version 3: the figures per group of examples and arm minus arm on the same examples,
# each with its 95% interval (`_lo`, `_hi`; NULL: none), as summary.json has them.
INTERVAL_TABLES = """
CREATE TABLE IF NOT EXISTS arm_group_metrics (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    model TEXT NOT NULL,
    constraint_mode TEXT NOT NULL,
    family TEXT NOT NULL,
    group_key TEXT NOT NULL,
    group_value TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL,
    value_lo REAL,
    value_hi REAL,
    PRIMARY KEY (run_key, model, constraint_mode, family, group_key, group_value, metric)
);
CREATE TABLE IF NOT EXISTS differences (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    family TEXT NOT NULL,
    metric TEXT NOT NULL,
    base_model TEXT NOT NULL,
    base_constraint TEXT NOT NULL,
    other_model TEXT NOT NULL,
    other_constraint TEXT NOT NULL,
    n INTEGER NOT NULL,
    difference REAL NOT NULL,
    difference_lo REAL NOT NULL,
    difference_hi REAL NOT NULL,
    PRIMARY KEY (run_key, family, metric, base_model, base_constraint, other_model,
                 other_constraint)
);
"""
_BASE_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices (
    fingerprint TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hostname TEXT,
    unit_id TEXT NOT NULL,
    unit_sources TEXT NOT NULL,
    model_id TEXT NOT NULL,
    model_label TEXT NOT NULL,
    config_id TEXT NOT NULL,
    cpu_model TEXT,
    machine TEXT,
    board_model TEXT,
    ram_total_mb INTEGER,
    logical_cores INTEGER,
    os TEXT,
    kernel TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    run_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    device TEXT NOT NULL REFERENCES devices (fingerprint),
    device_name TEXT NOT NULL,
    folder TEXT NOT NULL,
    label TEXT NOT NULL,
    kind TEXT NOT NULL,
    task TEXT NOT NULL,
    task_family TEXT NOT NULL,
    dataset_sha256 TEXT,
    status TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    edgebench_version TEXT,
    content_sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS arms (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    model TEXT NOT NULL,
    constraint_mode TEXT NOT NULL,
    status TEXT NOT NULL,
    registry_name TEXT,
    quant_type TEXT,
    file_size_bytes INTEGER,
    backend TEXT,
    threads INTEGER,
    n_examples INTEGER NOT NULL,
    n_scored INTEGER NOT NULL,
    n_errors INTEGER NOT NULL,
    ttft_s_p50 REAL,
    ttft_s_p95 REAL,
    latency_s_p50 REAL,
    prefill_tok_s_p50 REAL,
    decode_tok_s_p50 REAL,
    peak_rss_mib REAL,
    j_per_decode_token REAL,
    j_per_answer REAL,
    total_j REAL,
    ttft_s_p50_lo REAL,
    ttft_s_p50_hi REAL,
    latency_s_p50_lo REAL,
    latency_s_p50_hi REAL,
    prefill_tok_s_p50_lo REAL,
    prefill_tok_s_p50_hi REAL,
    decode_tok_s_p50_lo REAL,
    decode_tok_s_p50_hi REAL,
    decode_ratio_to_none REAL,
    decode_ratio_to_none_lo REAL,
    decode_ratio_to_none_hi REAL,
    contended_examples INTEGER,
    speed_clean INTEGER,
    PRIMARY KEY (run_key, model, constraint_mode)
);
CREATE TABLE IF NOT EXISTS arm_metrics (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    model TEXT NOT NULL,
    constraint_mode TEXT NOT NULL,
    family TEXT NOT NULL,
    role TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL,
    value_lo REAL,
    value_hi REAL,
    PRIMARY KEY (run_key, model, constraint_mode, family, metric)
);
CREATE TABLE IF NOT EXISTS samples (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    line INTEGER NOT NULL,
    model TEXT NOT NULL,
    constraint_mode TEXT NOT NULL,
    example_index INTEGER NOT NULL,
    example_id TEXT NOT NULL,
    temperature REAL,
    seed INTEGER,
    finish_reason TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    ttft_s REAL,
    latency_s REAL,
    prefill_tok_s REAL,
    decode_tok_s REAL,
    error TEXT,
    PRIMARY KEY (run_key, line)
);
CREATE TABLE IF NOT EXISTS sample_scores (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    line INTEGER NOT NULL,
    family TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (run_key, line, family, metric)
);
CREATE TABLE IF NOT EXISTS benches (
    bench_key TEXT PRIMARY KEY,
    device TEXT NOT NULL REFERENCES devices (fingerprint),
    device_name TEXT NOT NULL,
    file TEXT NOT NULL,
    label TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    edgebench_version TEXT,
    content_sha256 TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_rows (
    bench_key TEXT NOT NULL REFERENCES benches (bench_key),
    row INTEGER NOT NULL,
    model TEXT,
    quant_type TEXT,
    backend TEXT,
    size_bytes INTEGER,
    threads INTEGER NOT NULL,
    test TEXT NOT NULL,
    kind TEXT NOT NULL,
    n_tokens INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    repetitions INTEGER NOT NULL,
    tok_s_mean REAL,
    tok_s_std REAL,
    tok_s_median REAL,
    peak_rss_mib REAL,
    PRIMARY KEY (bench_key, row)
);
CREATE TABLE IF NOT EXISTS bench_files (
    bench_key TEXT PRIMARY KEY REFERENCES benches (bench_key),
    content BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS run_files (
    run_key TEXT NOT NULL REFERENCES runs (run_key),
    name TEXT NOT NULL,
    content BLOB NOT NULL,
    PRIMARY KEY (run_key, name)
);
"""
TABLES = _BASE_TABLES + INTERVAL_TABLES
# The statements that bring a database of version N to N + 1. Version 2 (format 2.9):
# peak RSS named for its unit (MiB), the speed intervals, contention. Rows stored before
# have NULL there until their folder is ingested again: the stored hashes are cleared so
# that the next `db ingest` of the same folder stores it anew instead of skipping it.
_SPEED_COLUMNS = (
    "ttft_s_p50_lo",
    "ttft_s_p50_hi",
    "latency_s_p50_lo",
    "latency_s_p50_hi",
    "prefill_tok_s_p50_lo",
    "prefill_tok_s_p50_hi",
    "decode_tok_s_p50_lo",
    "decode_tok_s_p50_hi",
    "decode_ratio_to_none",
    "decode_ratio_to_none_lo",
    "decode_ratio_to_none_hi",
)
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "ALTER TABLE arms RENAME COLUMN peak_rss_mb TO peak_rss_mib",
        "ALTER TABLE bench_rows RENAME COLUMN peak_rss_mb TO peak_rss_mib",
        *(f"ALTER TABLE arms ADD COLUMN {column} REAL" for column in _SPEED_COLUMNS),
        "ALTER TABLE arms ADD COLUMN contended_examples INTEGER",
        "ALTER TABLE arms ADD COLUMN speed_clean INTEGER",
        "UPDATE runs SET content_sha256 = ''",
    ),
    # Version 3: every interval of the summary: each figure's (arm_metrics `value_lo`,
    # `value_hi`), per group of examples (arm_group_metrics) and arm minus arm on the
    # same examples (differences). Stored runs are stored anew by the next ingest.
    2: (
        "ALTER TABLE arm_metrics ADD COLUMN value_lo REAL",
        "ALTER TABLE arm_metrics ADD COLUMN value_hi REAL",
        *(statement for statement in INTERVAL_TABLES.split(";") if statement.strip()),
        "UPDATE runs SET content_sha256 = ''",
    ),
}
# Every table of a run, children first (a re-ingest deletes in this order).
RUN_TABLES = (
    "sample_scores",
    "samples",
    "differences",
    "arm_group_metrics",
    "arm_metrics",
    "arms",
    "run_files",
    "runs",
)
BENCH_TABLES = ("bench_rows", "bench_files", "benches")
# The tables `db export` writes (the stored files stay in the database).
EXPORTED = (
    "devices",
    "runs",
    "arms",
    "arm_metrics",
    "arm_group_metrics",
    "differences",
    "samples",
    "sample_scores",
    "benches",
    "bench_rows",
)


def is_database(path: Path) -> bool:
    """A SQLite file (by its header), whatever its name."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=LOCK_WAIT_S, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _version(conn: sqlite3.Connection, path: Path) -> int | None:
    """The database's version, None for a new (empty) file."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return None
    if "meta" not in tables:
        raise UserError(f"{path}: a SQLite file, but not an edgebench results database")
    row = conn.execute("SELECT value FROM meta WHERE key = 'db_version'").fetchone()
    if row is None or not str(row[0]).isdigit():
        raise UserError(f"{path}: an edgebench database without a version (meta.db_version)")
    return int(row[0])


def open_db(path: Path, create: bool = False) -> sqlite3.Connection:
    """The database at `path`, checked (created with its tables when `create` and the file
    does not exist); a file that is not one edgebench reads is a one-line error."""
    if path.is_dir():
        raise UserError(f"{path}: a folder, not a database file (give e.g. {DEFAULT_DB})")
    if present(path):  # a FIFO, a device or a dangling link: one line, never SQLite's I/O error
        check_regular(path, "the database")
    if not path.exists():
        if not create:
            raise UserError(f"{path}: no such database (make one with `edgebench db ingest`)")
        if not path.parent.is_dir():
            raise UserError(f"{path}: folder {path.parent} does not exist")
    elif path.stat().st_size and not is_database(path):
        raise UserError(f"{path}: not a SQLite database file")
    try:
        conn = _connect(path)
        version = _version(conn, path)
        if version is not None and version > DB_VERSION:
            conn.close()
            raise UserError(
                f"{path}: results database version {version}, but this edgebench reads "
                f"version {DB_VERSION}; use a newer edgebench"
            )
        if version is None and not create:
            conn.close()
            raise UserError(f"{path}: an empty file, not an edgebench results database")
        if version is None:
            conn.executescript(TABLES)
            conn.execute("INSERT INTO meta VALUES ('db_version', ?)", (str(DB_VERSION),))
        elif version < DB_VERSION:
            _migrate(conn, version)
    except sqlite3.DatabaseError as exc:
        if is_full(exc):
            raise RunFailure(f"{path}: {db_problem(exc)}; free space, then try again") from None
        raise UserError(f"{path}: {db_problem(exc)}") from None
    return conn


def _migrate(conn: sqlite3.Connection, version: int) -> None:
    """An older database brought to DB_VERSION in one transaction: all or nothing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for step in range(version, DB_VERSION):
            for statement in MIGRATIONS[step]:
                conn.execute(statement)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'db_version'", (str(DB_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have ended it itself (a full disk)
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


def is_full(exc: sqlite3.Error) -> bool:
    """SQLite's SQLITE_FULL: the disk (or the file system's quota) is full."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    return code == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)


def db_problem(exc: sqlite3.Error) -> str:
    """What a SQLite error means for the user, in words."""
    text = str(exc)
    if is_full(exc):
        return f"the disk is full ({text})"
    if "locked" in text or "busy" in text:
        return "the database is locked by another edgebench or sqlite3 (try again when it ends)"
    if "malformed" in text or "not a database" in text:
        return f"the database file is corrupt ({text})"
    if "unable to open" in text or "readonly" in text:
        return f"cannot write the database file or its folder ({text})"
    return f"database error ({text})"


def check_writable(path: Path) -> None:
    """The database at `path` opened (created when missing) and a write tried and rolled
    back: a later ingest can store there, or a one-line error now (not a SQLite file,
    corrupt, locked, a folder that cannot be written)."""
    conn = open_db(path, create=True)
    try:
        conn.execute("BEGIN IMMEDIATE")  # the write lock: another writer holding it fails here
        # A row really written (an unchanged one is skipped): the journal file is made.
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('write_check', '')")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise UserError(f"{path}: {db_problem(exc)}") from None
    finally:
        conn.close()
