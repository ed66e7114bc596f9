"""`edgebench db ingest`: run folders of two devices into one database, validated first,
idempotent, a grown run replacing its rows, and a one-line error for every bad input."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from edgebench.db.ingest import RUN_FILES, find_runs, ingest
from edgebench.db.schema import open_db
from edgebench.errors import UserError
from edgebench.runfolder.identity import identity_of
from edgebench.runfolder.read import read_manifest
from edgebench.runner.jobs import ConsistencyRun
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of
from tests.helpers.db_runs import BAD_DATABASES, LAPTOP, PI5, write_bench, write_locked
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

TABLES = ("devices", "runs", "arms", "arm_metrics", "samples", "sample_scores", "run_files")


def dump(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table, in a stable order."""
    with sqlite3.connect(db) as conn:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES}


def ingested(db: Path, *paths: Path) -> list[str]:
    conn = open_db(db, create=True)
    try:
        return [done.outcome for done in ingest(conn, list(paths))]
    finally:
        conn.close()


def test_a_folder_of_run_folders_stores_two_devices_with_every_row(
    fleet_root: Path, tmp_path: Path
) -> None:
    db = tmp_path / "r.db"
    assert ingested(db, fleet_root) == ["added"] * 4
    rows = dump(db)
    assert len(rows["devices"]) == 2
    assert len(rows["runs"]) == 4
    assert len(rows["arms"]) == 8  # none and mask per run
    assert len(rows["samples"]) == 24  # 3 examples per arm
    names = {identity_of(read_manifest(f).device).name for f in find_runs(fleet_root)}
    assert {row[1] for row in rows["devices"]} == names
    with sqlite3.connect(db) as conn:
        arm = conn.execute(
            "SELECT quant_type, file_size_bytes, peak_rss_mib, threads, n_examples, "
            "decode_tok_s_p50 FROM arms JOIN runs USING (run_key) "
            "WHERE runs.folder LIKE '%pi5/Q8_0' AND constraint_mode = 'mask'"
        ).fetchone()
        f1 = conn.execute(
            "SELECT value FROM arm_metrics JOIN runs USING (run_key) WHERE metric = "
            "'field_f1' AND runs.folder LIKE '%pi5/Q8_0' AND constraint_mode = 'mask'"
        ).fetchone()
    assert arm[:5] == ("Q8_0", 4_000_000_000, 4500.0, 2, 3)
    assert arm[5] == pytest.approx(200.0)  # mask decodes twice as fast in the fake runs
    assert f1 == (1.0,)


def test_the_run_files_are_kept_verbatim(fleet_root: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    ingested(db, fleet_root)
    folder = fleet_root / "laptop" / "Q4_K_M"
    with sqlite3.connect(db) as conn:
        stored = dict(
            conn.execute(
                "SELECT name, content FROM run_files JOIN runs USING (run_key) WHERE folder = ?",
                (str(folder.resolve()),),
            ).fetchall()
        )
    on_disk = {n: (folder / n).read_bytes() for n in RUN_FILES if (folder / n).is_file()}
    assert stored == on_disk
    assert {"manifest.json", "samples.jsonl", "summary.json"} <= set(stored)


def test_ingesting_the_same_runs_again_changes_nothing(fleet_root: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    ingested(db, fleet_root)
    before = dump(db)
    assert ingested(db, fleet_root, fleet_root / "pi5" / "Q8_0") == ["unchanged"] * 5
    assert dump(db) == before


def test_a_run_grown_by_resume_replaces_its_rows(fleet: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run = fleet / "pi5" / "Q4_K_M"
    samples = run / "samples.jsonl"
    full = samples.read_text()
    samples.write_text("".join(full.splitlines(keepends=True)[:4]))  # an interrupted run
    ingested(db, fleet)
    assert len(dump(db)["samples"]) == 24 - 2
    samples.write_text(full)  # what --resume adds
    assert ingested(db, run) == ["replaced"]
    grown = dump(db)
    assert len(grown["runs"]) == 4 and len(grown["samples"]) == 24
    fresh = tmp_path / "fresh.db"
    ingested(fresh, fleet)
    assert dump(fresh) == grown  # as if ingested whole


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`edgebench db ingest ARGS` refusing a folder: exit 1, one `refused:` line."""
    code, err = run_cli(capsys, "db", "ingest", *args)
    assert_one_line_error(code, err, "refused:", exit_code=1)
    return err.strip()


def test_a_folder_off_the_published_format_is_refused_and_the_others_stored(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = fleet / "pi5" / "Q8_0" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["settings"]["threads"] = "four"
    manifest.write_text(json.dumps(data))
    db = tmp_path / "r.db"
    line = _refused(capsys, str(fleet), "--db", str(db))
    assert str(manifest) in line and "$.settings.threads" in line
    assert len(dump(db)["runs"]) == 3


def test_a_bad_sample_line_is_named_by_file_and_line(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = fleet / "laptop" / "Q8_0" / "samples.jsonl"
    lines = samples.read_text().splitlines(keepends=True)
    row = json.loads(lines[1])
    del row["finish_reason"]
    lines[1] = json.dumps(row) + "\n"
    samples.write_text("".join(lines))
    line = _refused(capsys, str(fleet / "laptop"), "--db", str(tmp_path / "r.db"))
    assert f"{samples}:2" in line and "finish_reason" in line


def test_an_unreadable_manifest_is_refused_in_one_line(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = fleet / "laptop" / "Q8_0" / "manifest.json"
    manifest.write_text("{not json")
    line = _refused(capsys, str(fleet), "--db", str(tmp_path / "r.db"))
    assert str(manifest) in line and "not valid JSON" in line


def test_ingest_prints_what_it_did(
    fleet_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    out = stdout_of(capsys, "db", "ingest", str(fleet_root), "--db", str(db))
    assert out.count("added: ") == 4 and "4 added, 0 replaced, 0 unchanged, 0 refused" in out
    again = stdout_of(capsys, "db", "ingest", str(fleet_root / "pi5"), "--db", str(db))
    assert "0 added, 0 replaced, 2 unchanged, 0 refused" in again


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: p.mkdir(), "no run folders under it"),
        (lambda p: p.write_text("x"), "a file, not a run folder"),
        (lambda p: None, "no such folder"),
    ],
)
def test_a_path_with_no_runs_is_a_one_line_error(
    make, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "empty"
    make(target)
    code, err = run_cli(capsys, "db", "ingest", str(target), "--db", str(tmp_path / "r.db"))
    assert_one_line_error(code, err, str(target), fragment)


@pytest.mark.parametrize(("make", "fragment"), BAD_DATABASES.values(), ids=list(BAD_DATABASES))
def test_a_bad_database_is_a_one_line_error(
    make, fragment: str, fleet_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    make(db)
    for args in (("db", "ingest", str(fleet_root)), ("db", "export", "--csv", "t")):
        code, err = run_cli(capsys, *args, "--db", str(db))
        assert_one_line_error(code, err, str(db), fragment)


def test_a_locked_database_is_a_one_line_error(
    fleet_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "r.db"
    open_db(db, create=True).close()
    with write_locked(db, monkeypatch):
        code, err = run_cli(capsys, "db", "ingest", str(fleet_root), "--db", str(db))
    assert_one_line_error(code, err, str(db), "locked")


def test_a_database_in_a_folder_where_no_file_can_be_made_is_a_one_line_error(
    fleet_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = "/proc/r.db"  # root included, nobody creates a file there
    code, err = run_cli(capsys, "db", "ingest", str(fleet_root), "--db", db)
    assert_one_line_error(code, err, db, "cannot write the database file or its folder")


def test_each_folder_is_one_line_however_narrow_the_terminal(
    fleet_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # the paths are longer: once each broke in two
    db = tmp_path / "r.db"
    out = stdout_of(capsys, "db", "ingest", str(fleet_root), "--db", str(db))
    folders = sorted(str(folder) for folder in find_runs(fleet_root))
    assert out.splitlines() == [
        *(f"added: {folder}" for folder in folders),
        f"{db}: 4 added, 0 replaced, 0 unchanged, 0 refused",
    ]


def test_a_missing_database_is_named(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such database"):
        open_db(tmp_path / "none.db")


def test_bench_files_beside_the_runs_are_stored_with_their_rows(
    fleet: Path, tmp_path: Path
) -> None:
    bench = write_bench(fleet / "pi5" / "bench" / "cell-1.json", PI5)
    db = tmp_path / "r.db"
    assert sorted(ingested(db, fleet)) == ["added"] * 5
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT d.name, b.label, r.test, r.quant_type, r.tok_s_mean FROM bench_rows r "
            "JOIN benches b USING (bench_key) JOIN devices d ON d.fingerprint = b.device "
            "ORDER BY r.row"
        ).fetchall()
        (content,) = conn.execute("SELECT content FROM bench_files").fetchone()
        runs_of_pi = conn.execute(
            "SELECT count(*) FROM runs WHERE device = (SELECT device FROM benches)"
        ).fetchone()
    pi = identity_of(read_manifest(fleet / "pi5" / "Q8_0").device).name
    assert rows == [
        (pi, "cell-1.json", "pp64", "Q4_K_M", 120.0),
        (pi, "cell-1.json", "tg32", "Q4_K_M", 20.0),
    ]
    assert content == bench.read_bytes()
    assert runs_of_pi == (2,)  # the bench's device is the Pi's runs' device
    assert sorted(ingested(db, fleet, bench)) == ["unchanged"] * 6


def test_a_bench_file_off_the_format_is_refused(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = write_bench(fleet / "bench" / "b.json", LAPTOP)
    data = json.loads(bench.read_text())
    data["results"][0]["threads"] = "four"
    bench.write_text(json.dumps(data))
    line = _refused(capsys, str(bench), "--db", str(tmp_path / "r.db"))
    assert str(bench) in line and "$.results[0].threads" in line


def test_a_consistency_run_is_stored_with_each_draw(run_fake: RunFake, tmp_path: Path) -> None:
    kind = ConsistencyRun(samples=2, temperatures=(0.5,))
    run = run_fake([RIGHT], n=2, kind=kind, out=tmp_path / "c").run_dir
    db = tmp_path / "r.db"
    assert ingested(db, run) == ["added"]
    with sqlite3.connect(db) as conn:
        draws = conn.execute(
            "SELECT example_id, temperature, seed FROM samples ORDER BY line"
        ).fetchall()
        kinds = conn.execute("SELECT kind FROM runs").fetchall()
    assert kinds == [("consistency",)]
    assert len(draws) == 4 and {d[1] for d in draws} == {0.5}
    assert len({(d[0], d[2]) for d in draws}) == 4  # two draws of each example


def test_paths_print_as_text_not_markup(
    fleet_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = Path(shutil.copytree(fleet_root / "pi5" / "Q8_0", tmp_path / "[bold]x[/bold]"))
    db = tmp_path / "[red]r.db"
    out = stdout_of(capsys, "db", "ingest", str(folder), "--db", str(db))
    assert f"added: {folder}\n" in out and f"{db}: 1 added" in out
