"""`compare`, `report` and `card` read a results database as they read the run folders
that went into it: the same output, byte for byte; `--device` and `--run` select."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgebench.db.ingest import find_runs, ingest
from edgebench.db.runs import write_runs
from edgebench.db.schema import open_db
from edgebench.runfolder.identity import identity_of
from edgebench.runfolder.read import read_manifest
from edgebench.summary import load_run
from tests.helpers.cli import cli_error, stdout_of
from tests.helpers.db_runs import PI5, write_bench
from tests.helpers.inline_prompts import chat_templates_in_process


@pytest.fixture(scope="module")
def db(fleet_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("db") / "results.db"
    conn = open_db(path, create=True)
    assert [done.outcome for done in ingest(conn, [fleet_root])] == ["added"] * 4
    conn.close()
    return path


def folders(fleet_root: Path) -> list[str]:
    """The fleet's run folders in the order a database lists them (by path)."""
    return [str(f.resolve()) for f in find_runs(fleet_root)]


@pytest.mark.parametrize("as_json", [(), ("--json",)])
def test_compare_prints_the_same_from_the_db_as_from_the_folders(
    as_json: tuple[str, ...], db: Path, fleet_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from_folders = stdout_of(capsys, "compare", *folders(fleet_root), *as_json)
    assert stdout_of(capsys, "compare", str(db), *as_json) == from_folders


def test_device_selects_one_devices_runs(
    db: Path, fleet_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pi = fleet_root / "pi5"
    name = identity_of(read_manifest(pi / "Q8_0").device).name
    expected = stdout_of(capsys, "compare", *folders(pi), "--json")
    assert stdout_of(capsys, "compare", str(db), "--device", name, "--json") == expected
    error = cli_error(capsys, "compare", str(db), "--device", "nowhere")
    assert "no runs of device 'nowhere'" in error
    error = cli_error(capsys, "compare", str(pi / "Q8_0"), "--device", name)
    assert "--device selects runs of a results database" in error


def _page(path: Path) -> str:
    """The page, its time of making left out."""
    text = path.read_text(encoding="utf-8")
    return re.sub(r"at \d{4}-\d\d-\d\dT[\d:]+\+00:00\.", "at <time>.", text)


def test_report_renders_the_same_page_from_the_db(
    db: Path, fleet_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with chat_templates_in_process():
        stdout_of(capsys, "report", *folders(fleet_root), "--out", str(tmp_path / "a.html"))
        out = stdout_of(capsys, "report", str(db), "--out", str(tmp_path / "b.html"))
    assert "4 runs" in out
    page = _page(tmp_path / "b.html")
    assert page == _page(tmp_path / "a.html")
    # rows are labelled by the ingested folders' names, parents where they clash
    assert re.search(r">\s*pi5/Q8_0\s*<", page) and re.search(r">\s*laptop/Q8_0\s*<", page)


def test_card_describes_the_one_run_named(
    db: Path, fleet_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = fleet_root / "laptop" / "Q4_K_M"
    laptop = identity_of(read_manifest(run).device).name
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    stdout_of(capsys, "card", str(run), "--out", str(tmp_path / "a" / "card.md"), "--examples", "0")
    out = tmp_path / "b" / "card.md"
    args = ("--device", laptop, "--run", "Q4_K_M", "--out", str(out), "--examples", "0")
    stdout_of(capsys, "card", str(db), *args)
    assert out.read_text() == (tmp_path / "a" / "card.md").read_text()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--out", "c.md"), "4 runs match"),
        (("--run", "Q8_0", "--out", "c.md"), "2 runs match"),
        (("--run", "Q8_0", "--device", "x"), "no runs of device 'x' and run 'Q8_0'"),
    ],
)
def test_card_from_a_db_needs_one_run_and_a_file(
    args: tuple[str, ...], fragment: str, db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert fragment in cli_error(capsys, "card", str(db), *args)


def test_card_from_a_db_needs_out(
    db: Path, fleet_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    laptop = identity_of(read_manifest(fleet_root / "laptop" / "Q8_0").device).name
    error = cli_error(capsys, "card", str(db), "--run", "Q8_0", "--device", laptop)
    assert "give the card's file with --out FILE" in error


def test_a_db_file_that_is_not_one_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "results.db"
    fake.write_text("not a database")
    assert f"{fake}: not a SQLite database file" in cli_error(capsys, "compare", str(fake))


def test_report_shows_the_bench_files_of_the_db_too(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = write_bench(fleet / "pi5" / "bench" / "cell-1.json", PI5)
    db = tmp_path / "b.db"
    conn = open_db(db, create=True)
    list(ingest(conn, [fleet]))
    conn.close()
    with chat_templates_in_process():
        args = ("--out", str(tmp_path / "a.html"))
        stdout_of(capsys, "report", *folders(fleet), str(bench), *args)
        out = stdout_of(capsys, "report", str(db), "--out", str(tmp_path / "b.html"))
    assert "4 runs, 1 bench file" in out
    assert _page(tmp_path / "b.html") == _page(tmp_path / "a.html")


def test_a_run_loaded_from_the_db_is_the_run_loaded_from_its_folder(
    db: Path, fleet_root: Path, tmp_path: Path
) -> None:
    written = write_runs(db, tmp_path)
    originals = find_runs(fleet_root)
    assert [w.name for w in written] == [o.name for o in originals]
    for copy, original in zip(written, originals, strict=True):
        stored, loaded = load_run(copy), load_run(original)
        assert (stored.manifest, stored.samples, stored.summary, stored.timeline) == (
            loaded.manifest,
            loaded.samples,
            loaded.summary,
            loaded.timeline,
        )
        # the same last path parts: the same row labels in a report
        assert copy.parts[-2:] == original.resolve().parts[-2:]
