"""The results database keeps every interval of the run summary (issue 37): each
family figure's (arm_metrics), per group of examples (arm_group_metrics) and arm minus
arm on the same examples (differences); a version-2 database is brought up to date when
opened, and the runs it held are stored anew by the next ingest."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from edgebench.db.ingest import ingest
from edgebench.db.schema import DB_VERSION, open_db
from edgebench.summary import load_run
from tests.helpers.db_runs import as_version_2

# one answer right of three: intervals that are not a point
RUN = "pi5/Q4_K_M"
MASK = f"runs.folder LIKE '%{RUN}' AND constraint_mode = 'mask'"


def _ingest(db: Path, *paths: Path) -> list[str]:
    conn = open_db(db, create=True)
    try:
        return [done.outcome for done in ingest(conn, list(paths))]
    finally:
        conn.close()


def _select(db: Path, sql: str) -> list[sqlite3.Row]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute(sql).fetchall()


def test_every_interval_of_the_summary_is_stored(fleet_root: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _ingest(db, fleet_root)
    summary = load_run(fleet_root / RUN).summary
    task = next(a for a in summary.arms if a.constraint == "mask").task
    assert task is not None
    # each figure with an interval in summary.json has it in arm_metrics, and no other
    stored = {
        row["metric"]: row
        for row in _select(
            db,
            "SELECT m.* FROM arm_metrics m JOIN runs USING (run_key) "
            f"WHERE {MASK.replace('constraint_mode', 'm.constraint_mode')} "
            "AND m.family = runs.task_family",
        )
    }
    with_interval = {k for k, v in task.ci95.items() if v is not None}
    assert with_interval and "field_f1" in with_interval
    for metric, row in stored.items():
        expected = task.ci95.get(metric)
        assert [row["value_lo"], row["value_hi"]] == (expected or [None, None]), metric
    assert with_interval <= set(stored)
    # per group of examples, with their intervals
    groups = _select(
        db,
        "SELECT g.* FROM arm_group_metrics g JOIN runs USING (run_key) "
        f"WHERE {MASK.replace('constraint_mode', 'g.constraint_mode')} "
        "AND g.family = runs.task_family",
    )
    expected_groups = {
        (key, value, metric): (figure, task.groups_ci95.get(key, {}).get(value, {}).get(metric))
        for key, by_value in task.groups.items()
        for value, figures in by_value.items()
        for metric, figure in figures.items()
    }
    assert expected_groups and len(groups) == len(expected_groups)
    for row in groups:
        figure, interval = expected_groups[(row["group_key"], row["group_value"], row["metric"])]
        assert row["value"] == (pytest.approx(figure) if isinstance(figure, float) else figure)
        assert [row["value_lo"], row["value_hi"]] == (interval or [None, None])
    # arm minus arm on the same examples, with the paired interval
    differences = _select(
        db,
        f"SELECT d.* FROM differences d JOIN runs USING (run_key) WHERE runs.folder LIKE '%{RUN}'",
    )
    assert summary.differences and len(differences) == len(summary.differences)
    by_metric = {(d.family, d.metric, d.other_constraint): d for d in summary.differences}
    for row in differences:
        d = by_metric[(row["family"], row["metric"], row["other_constraint"])]
        assert (row["base_constraint"], row["n"]) == (d.base_constraint, d.n)
        assert [row["difference_lo"], row["difference"], row["difference_hi"]] == pytest.approx(
            [d.ci95[0], d.difference, d.ci95[1]]
        )


def test_a_version_2_database_is_migrated_and_its_runs_stored_anew(
    fleet_root: Path, tmp_path: Path
) -> None:
    db = tmp_path / "old.db"
    assert _ingest(db, fleet_root) == ["added"] * 4
    as_version_2(db)
    conn = open_db(db)  # brought up to date here
    version = conn.execute("SELECT value FROM meta WHERE key = 'db_version'").fetchone()
    columns = {row[1] for row in conn.execute("PRAGMA table_info(arm_metrics)")}
    conn.close()
    assert version == (str(DB_VERSION),) and DB_VERSION == 3
    assert {"value_lo", "value_hi"} <= columns

    def f1_lo() -> list:
        sql = "SELECT value_lo FROM arm_metrics WHERE metric = 'field_f1'"
        return [row[0] for row in _select(db, sql)]

    assert set(f1_lo()) == {None}  # not there until stored anew
    assert _select(db, "SELECT count(*) FROM differences")[0][0] == 0
    assert _ingest(db, fleet_root) == ["replaced"] * 4
    assert None not in f1_lo()
    assert _select(db, "SELECT count(*) FROM differences")[0][0] > 0
    assert _ingest(db, fleet_root) == ["unchanged"] * 4
