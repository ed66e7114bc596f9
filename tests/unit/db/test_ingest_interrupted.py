"""Ctrl-C (or SIGTERM, SIGHUP: the CLI makes them one) in the middle of `db ingest`, inside
a run's transaction: exit 130 with one line, the runs stored before it kept, the run cut
short not stored at all (no half of its samples), the database whole; the same ingest
again stores the rest."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from edgebench.db import ingest
from tests.helpers.cli import run_cli, stdout_of


def test_ctrl_c_inside_a_runs_transaction_stores_nothing_of_that_run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fleet: Path,
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    real = ingest._insert
    calls: list[str] = []

    def insert(conn: sqlite3.Connection, table: str, rows: list) -> None:  # type: ignore[type-arg]
        calls.append(table)
        if table == "samples" and calls.count("samples") == 2:  # the second run's samples
            real(conn, table, rows[:1])  # some rows are in, then the stop comes
            raise KeyboardInterrupt
        real(conn, table, rows)

    monkeypatch.setattr(ingest, "_insert", insert)
    code, err = run_cli(capsys, "db", "ingest", str(fleet), "--db", str(db))
    assert code == 130, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith("interrupted"), err
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        samples = conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
    assert runs == 1 and samples == 6  # the first run whole, nothing of the second
    monkeypatch.undo()
    stdout_of(capsys, "db", "ingest", str(fleet), "--db", str(db))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 4
        assert conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 24
