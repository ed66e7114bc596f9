"""`edgebench db export`: one CSV per table (Parquet when pyarrow is installed, a
one-line error saying how to install it otherwise)."""

from __future__ import annotations

import builtins
import csv
import sqlite3
from pathlib import Path

import pytest

from edgebench.db.ingest import ingest
from edgebench.db.schema import EXPORTED, open_db
from tests.helpers.cli import cli_error, stdout_of
from tests.helpers.needs import unavailable


@pytest.fixture(scope="module")
def db(fleet_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("db") / "results.db"
    conn = open_db(path, create=True)
    list(ingest(conn, [fleet_root]))
    conn.close()
    return path


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_csv_writes_every_table_with_its_rows(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = stdout_of(capsys, "db", "export", "--db", str(db), "--csv", str(tmp_path / "t"))
    assert out.count("wrote ") == len(EXPORTED)
    for table in EXPORTED:
        with (tmp_path / "t" / f"{table}.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert len(rows) == _count(db, table)
    arms = list(csv.DictReader((tmp_path / "t" / "arms.csv").open(newline="")))
    assert {row["quant_type"] for row in arms} == {"Q4_K_M", "Q8_0"}


def test_parquet_writes_every_table(db: Path, tmp_path: Path) -> None:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # the dev extra installs it
        unavailable("pyarrow is not installed: pip install 'edgebench[parquet]'")
    from edgebench.db.export import export_parquet

    conn = open_db(db)
    written = export_parquet(conn, db, tmp_path / "p")
    conn.close()
    assert [p.name for p in written] == [f"{t}.parquet" for t in EXPORTED]
    assert pq.read_table(tmp_path / "p" / "samples.parquet").num_rows == _count(db, "samples")


def test_parquet_without_pyarrow_says_how_to_install_it(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: object, **kwargs: object) -> object:
        if name.split(".")[0] == "pyarrow":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    error = cli_error(capsys, "db", "export", "--db", str(db), "--parquet", str(tmp_path / "p"))
    assert "--parquet needs pyarrow" in error and "pip install 'edgebench[parquet]'" in error
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((), "give one of --csv DIR or --parquet DIR"),
        (("--csv", "a", "--parquet", "b"), "give one of --csv DIR or --parquet DIR"),
    ],
)
def test_export_needs_one_format(
    args: tuple[str, ...], fragment: str, db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert fragment in cli_error(capsys, "db", "export", "--db", str(db), *args)


def test_export_into_a_file_or_a_missing_parent_is_refused(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "f").write_text("x")
    assert "a file; give a folder" in cli_error(
        capsys, "db", "export", "--db", str(db), "--csv", str(tmp_path / "f")
    )
    missing = tmp_path / "no" / "t"
    assert "does not exist" in cli_error(
        capsys, "db", "export", "--db", str(db), "--csv", str(missing)
    )


def test_export_of_a_missing_database_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = cli_error(capsys, "db", "export", "--db", str(tmp_path / "x.db"), "--csv", "t")
    assert "no such database" in error
