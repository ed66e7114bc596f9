"""`edgebench db` in processes of its own: two ingests into one database at once both
finish (the second waits for the first's transaction) and store every run once; the
database then serves `compare` as the folders do."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import edgebench_ok
from tests.helpers.db_runs import make_fleet_runs


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("db-process") / "fleet"
    make_fleet_runs(root)
    return root


def test_two_ingests_at_once_store_every_run_once(fleet: Path, tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    edgebench_ok("db", "ingest", str(fleet / "pi5"), "--db", str(db))  # the tables first
    ingests = [
        subprocess.Popen(
            [sys.executable, "-m", "edgebench", "db", "ingest", str(fleet), "--db", str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for process in ingests:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert "0 refused" in out
    with sqlite3.connect(db) as conn:
        counts = [
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "samples")
        ]
    assert counts == [4, 24]
    from_db = edgebench_ok("compare", str(db), "--json").stdout
    folders = sorted(str(p.parent.resolve()) for p in fleet.rglob("manifest.json"))
    assert from_db == edgebench_ok("compare", *folders, "--json").stdout
