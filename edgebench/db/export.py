"""`edgebench db export`: the queryable tables as one CSV or Parquet file each (the
stored run files stay in the database)."""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

from edgebench.db.schema import EXPORTED, db_problem
from edgebench.errors import UserError
from edgebench.io import write_text_atomic

PARQUET_HINT = "pip install 'edgebench[parquet]' (pyarrow, about 40 MB; --csv needs nothing)"


def _table(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[tuple]]:
    cursor = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")
    return [c[0] for c in cursor.description], cursor.fetchall()


def _out_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: a file; give a folder to write the tables into")
    if not out.parent.is_dir():
        raise UserError(f"{out}: folder {out.parent} does not exist")
    out.mkdir(exist_ok=True)


def export_csv(conn: sqlite3.Connection, db: Path, out: Path) -> list[Path]:
    """One `<table>.csv` per table under `out` (header row, NULL as an empty cell)."""
    _out_folder(out)
    written = []
    try:
        for table in EXPORTED:
            columns, rows = _table(conn, table)
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)
            path = out / f"{table}.csv"
            write_text_atomic(path, text.getvalue())
            written.append(path)
    except sqlite3.Error as exc:
        raise UserError(f"{db}: {db_problem(exc)}") from None
    return written


def export_parquet(conn: sqlite3.Connection, db: Path, out: Path) -> list[Path]:
    """One `<table>.parquet` per table under `out`; pyarrow is optional."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(
            f"--parquet needs pyarrow, which is not installed: {PARQUET_HINT}"
        ) from None
    _out_folder(out)
    written = []
    try:
        for table in EXPORTED:
            columns, rows = _table(conn, table)
            data = {name: [row[i] for row in rows] for i, name in enumerate(columns)}
            path = out / f"{table}.parquet"
            pq.write_table(pa.table(data), path)
            written.append(path)
    except sqlite3.Error as exc:
        raise UserError(f"{db}: {db_problem(exc)}") from None
    return written
