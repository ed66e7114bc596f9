"""`db ingest` on a full disk says so: SQLite's own error (disk full), not the "cannot
rollback" of a transaction SQLite already ended, in one line with exit code 1; what was
stored before is kept. The disk is made full with SQLite's page limit (the same
SQLITE_FULL a full file system gives: tests/system/test_full_disk.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from edgebench.db import schema
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of


def pages_limited_to(monkeypatch: pytest.MonkeyPatch, extra_pages: int) -> None:
    """Every connection may grow its database by `extra_pages` pages, then it is full."""
    real = schema._connect

    def connect(path: Path) -> sqlite3.Connection:
        conn = real(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + extra_pages}")
        return conn

    monkeypatch.setattr(schema, "_connect", connect)


def test_a_full_disk_is_named_as_such_not_as_cannot_rollback(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fleet: Path,
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    first = sorted(p.parent for p in fleet.rglob("manifest.json"))[0]
    stdout_of(capsys, "db", "ingest", str(first), "--db", str(db))
    before = db.read_bytes()
    pages_limited_to(monkeypatch, 2)
    code, err = run_cli(capsys, "db", "ingest", str(fleet), "--db", str(db))
    assert_one_line_error(code, err, "the disk is full (database or disk is full)", exit_code=1)
    assert "cannot rollback" not in err
    assert "free space, then run the same ingest again" in err
    monkeypatch.undo()
    with sqlite3.connect(db) as conn:  # the run stored before is still there, whole
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.read_bytes() == before


def test_a_full_disk_when_the_database_is_made_is_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fleet: Path,
    tmp_path: Path,
) -> None:
    pages_limited_to(monkeypatch, 1)
    code, err = run_cli(capsys, "db", "ingest", str(fleet), "--db", str(tmp_path / "new.db"))
    assert_one_line_error(code, err, "new.db: the disk is full", exit_code=1)
