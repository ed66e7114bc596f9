"""The results database holds the speed intervals and contention of each arm, peak RSS
named for its unit (MiB); a version-1 database is brought up to date when opened, and the
runs it held are stored anew by the next ingest."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from edgebench.db.ingest import ingest
from edgebench.db.schema import _SPEED_COLUMNS, DB_VERSION, open_db
from tests.helpers.db_runs import as_version_2

NEW_COLUMNS = (*_SPEED_COLUMNS, "contended_examples", "speed_clean")


def _ingest(db: Path, *paths: Path) -> list[str]:
    conn = open_db(db, create=True)
    try:
        return [done.outcome for done in ingest(conn, list(paths))]
    finally:
        conn.close()


def _mask_arm(db: Path) -> sqlite3.Row:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(
            "SELECT * FROM arms JOIN runs USING (run_key) "
            "WHERE runs.folder LIKE '%pi5/Q8_0' AND constraint_mode = 'mask'"
        ).fetchone()


def _as_version_1(db: Path) -> None:
    """The database as version 1 wrote it: peak_rss_mb, none of the new columns."""
    as_version_2(db)
    with sqlite3.connect(db) as conn:
        for column in NEW_COLUMNS:
            conn.execute(f"ALTER TABLE arms DROP COLUMN {column}")
        conn.execute("ALTER TABLE arms RENAME COLUMN peak_rss_mib TO peak_rss_mb")
        conn.execute("ALTER TABLE bench_rows RENAME COLUMN peak_rss_mib TO peak_rss_mb")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'db_version'")


def test_each_arm_has_its_speed_intervals(fleet_root: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _ingest(db, fleet_root)
    arm = _mask_arm(db)
    assert arm["peak_rss_mib"] == 4500.0
    decode = arm["decode_tok_s_p50"]
    assert arm["decode_tok_s_p50_lo"] <= decode <= arm["decode_tok_s_p50_hi"]
    for figure in ("ttft_s_p50", "latency_s_p50", "prefill_tok_s_p50"):
        assert arm[f"{figure}_lo"] <= arm[figure] <= arm[f"{figure}_hi"]
    assert arm["decode_ratio_to_none"] == pytest.approx(2.0)  # mask decodes twice as fast
    assert arm["decode_ratio_to_none_lo"] <= 2.0 <= arm["decode_ratio_to_none_hi"]
    # the fake runs measure a quiet machine (tests/unit/conftest.py): clean, none contended
    assert arm["speed_clean"] == 1 and arm["contended_examples"] == 0


def test_a_version_1_database_is_migrated_and_its_runs_stored_anew(
    fleet_root: Path, tmp_path: Path
) -> None:
    db = tmp_path / "old.db"
    assert _ingest(db, fleet_root) == ["added"] * 4
    _as_version_1(db)
    conn = open_db(db)  # brought up to date here
    version = conn.execute("SELECT value FROM meta WHERE key = 'db_version'").fetchone()
    columns = {row[1] for row in conn.execute("PRAGMA table_info(arms)")}
    conn.close()
    assert version == (str(DB_VERSION),)
    assert set(NEW_COLUMNS) | {"peak_rss_mib"} <= columns and "peak_rss_mb" not in columns
    assert _mask_arm(db)["peak_rss_mib"] == 4500.0  # the stored value kept, renamed
    assert _mask_arm(db)["decode_tok_s_p50_lo"] is None  # not there until stored anew
    assert _ingest(db, fleet_root) == ["replaced"] * 4
    assert _mask_arm(db)["decode_tok_s_p50_lo"] is not None
    assert _ingest(db, fleet_root) == ["unchanged"] * 4
