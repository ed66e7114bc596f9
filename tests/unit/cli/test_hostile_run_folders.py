"""Run folders from elsewhere (copied, fetched, hand-edited) under every command that
reads them back: each file of the folder made hostile in each way (an over-long
integer, nesting 100,000 levels deep, a FIFO, a link to /dev/zero, a file over its
limit, a value of the wrong type) is one line naming the file (and line) for `score`,
`compare`, `card`, `report` and `run --resume`, and a `refused:` line for `db ingest`
that still stores the other runs. Never a traceback, never a hang."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from edgebench import readback
from edgebench.cli.app import main
from edgebench.errors import UserError
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.report_runs import make_run
from tests.helpers.run_fake import RunFake

HUGE_INT = "9" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with chat_templates_in_process():
        return make_run(tmp_path_factory.mktemp("hostile") / "run", modes="none", n=2)


def _with_field(text: str, value: str) -> str:
    """A JSON object's text with a first field `"x": value` added."""
    return '{"x": ' + value + ", " + text.lstrip()[1:]


def huge_int(path: Path) -> None:
    if path.suffix == ".jsonl":
        lines = path.read_text().splitlines(keepends=True)
        lines[0] = _with_field(lines[0], HUGE_INT)
        path.write_text("".join(lines))
    else:
        path.write_text(_with_field(path.read_text(), HUGE_INT))


def deep(path: Path) -> None:
    if path.suffix == ".jsonl":
        path.write_text('{"x": ' + DEEP + "}\n" + path.read_text())
    else:
        path.write_text(_with_field(path.read_text(), DEEP))


def fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def device(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def oversized(path: Path) -> None:
    limit = readback.MAX_JSONL_BYTES if path.suffix == ".jsonl" else readback.MAX_DOCUMENT_BYTES
    with path.open("r+b") as handle:  # sparse: nothing is written
        handle.truncate(limit + 1)


def wrong_type(path: Path) -> None:
    if path.suffix == ".jsonl":
        lines = path.read_text().splitlines(keepends=True)
        row = json.loads(lines[0])
        row["finish_reason"] = 5
        lines[0] = json.dumps(row) + "\n"
        path.write_text("".join(lines))
    else:
        data = json.loads(path.read_text())
        data["status"] = ["completed"]
        path.write_text(json.dumps(data))


SPOILERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "huge-int": (huge_int, "integer with 5000 digits"),
    "deep": (deep, "nested too deeply"),
    "fifo": (fifo, "is a FIFO"),
    "device": (device, "is a link to a character device"),
    "oversized": (oversized, "limit"),
    "wrong-type": (wrong_type, "status"),
}
FILES = ("manifest.json", "samples.jsonl", "summary.json")


def spoiled(clean_run: Path, tmp_path: Path, file: str, how: str) -> tuple[Path, str]:
    run = tmp_path / "runs" / "run"
    shutil.copytree(clean_run, run)
    spoil, fragment = SPOILERS[how]
    if how == "wrong-type" and file == "samples.jsonl":
        fragment = "finish_reason"
    spoil(run / file)
    return run, fragment


CASES = [(file, how) for file in FILES for how in SPOILERS]
# the summary is derived again from the records by every command but `db ingest`, which
# stores it; `run --resume` reads the samples only once its worker is up (the engine's
# own test below)
COMMAND_CASES = [
    (name, file, how)
    for name in ("score", "compare", "card", "report", "resume")
    for file, how in CASES
    if file != "summary.json" and (name != "resume" or file == "manifest.json")
]


def command(name: str, run: Path, tmp_path: Path) -> list[str]:
    return {
        "score": ["score", str(run)],
        "compare": ["compare", str(run)],
        "card": ["card", str(run), "--out", str(tmp_path / "card.md")],
        "report": ["report", str(run), "--out", str(tmp_path / "report.html")],
        "resume": ["run", "--resume", str(run)],
    }[name]


@pytest.mark.parametrize(("name", "file", "how"), COMMAND_CASES)
def test_every_reader_of_a_run_folder_ends_in_one_line(
    name: str,
    file: str,
    how: str,
    clean_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run, fragment = spoiled(clean_run, tmp_path, file, how)
    code, err = run_cli(capsys, *command(name, run, tmp_path))
    assert_one_line_error(code, err, file, fragment)


@pytest.mark.parametrize(("file", "how"), CASES)
def test_db_ingest_refuses_the_folder_and_stores_the_others(
    file: str, how: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, fragment = spoiled(clean_run, tmp_path, file, how)
    shutil.copytree(clean_run, tmp_path / "runs" / "good")
    db = tmp_path / "r.db"
    with pytest.raises(SystemExit) as exit_info:
        main(["db", "ingest", str(tmp_path / "runs"), "--db", str(db)])
    captured = capsys.readouterr()
    assert exit_info.value.code == 1, captured.err
    assert "Traceback" not in captured.err + captured.out
    refused = [line for line in captured.err.splitlines() if line.strip()]
    assert len(refused) == 1 and "refused:" in refused[0], captured.err
    assert file in refused[0] and fragment in refused[0], refused[0]
    assert "1 added" in captured.out


@pytest.mark.parametrize("name", ["timeline.jsonl", "power-log.jsonl", "fidelity.json"])
@pytest.mark.parametrize("how", ["fifo", "device", "deep", "huge-int"])
def test_the_optional_files_are_read_as_boundedly(
    name: str, how: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    (run / name).write_text('{"schema_version": "2.8"}\n')
    spoil, fragment = SPOILERS[how]
    spoil(run / name)
    code, err = run_cli(capsys, "compare", str(run))
    assert_one_line_error(code, err, name, fragment)


@pytest.mark.parametrize("how", list(SPOILERS))
def test_resume_of_hostile_samples_ends_in_one_line(
    how: str, run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    run_fake(['{"a": 1}'] * 3, out=out)
    spoil, fragment = SPOILERS[how]
    spoil(out / "samples.jsonl")
    with pytest.raises(UserError) as exc:
        run_fake(['{"a": 1}'] * 3, out=out, resume=True)
    message = str(exc.value)
    assert "\n" not in message and "samples.jsonl" in message
    assert (fragment if how != "wrong-type" else "finish_reason") in message, message


def _stored(clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    db = tmp_path / "r.db"
    with pytest.raises(SystemExit) as exit_info:
        main(["db", "ingest", str(clean_run), "--db", str(db)])
    assert not exit_info.value.code, capsys.readouterr().err
    capsys.readouterr()
    return db


STORED = {
    "huge-int": lambda text: _with_field(text, HUGE_INT).encode(),
    "deep": lambda text: _with_field(text, DEEP).encode(),
    "not-utf8": lambda text: text.encode() + b"\xff",
    "wrong-type": lambda text: text.replace('"status": "completed"', '"status": 5').encode(),
}


@pytest.mark.parametrize("how", list(STORED))
@pytest.mark.parametrize("name", ["compare", "card", "report"])
def test_a_hostile_run_stored_in_a_database_names_the_database_run_and_file(
    name: str, how: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _stored(clean_run, tmp_path, capsys)
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute(
            "SELECT content FROM run_files WHERE name = 'manifest.json'"
        ).fetchone()
        content = STORED[how](text.decode())
        conn.execute("UPDATE run_files SET content = ? WHERE name = 'manifest.json'", (content,))
    conn.close()
    code, err = run_cli(capsys, *command(name, db, tmp_path))
    assert_one_line_error(code, err, str(db), "run ", "stored manifest.json")
    assert "edgebench-db-" not in err  # never the throwaway folder


@pytest.mark.parametrize("value", ["'text'", "12", "3.5"])
def test_stored_content_of_the_wrong_type_is_one_line(
    value: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _stored(clean_run, tmp_path, capsys)
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE run_files SET content = {value} WHERE name = 'samples.jsonl'")
    conn.close()
    code, err = run_cli(capsys, "compare", str(db))
    assert_one_line_error(code, err, str(db), "samples.jsonl")


@pytest.mark.parametrize("how", ["fifo", "device"])
def test_a_lock_file_that_is_not_a_regular_file_is_one_line_on_resume(
    how: str, run_fake: RunFake, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    run_fake(['{"a": 1}'] * 3, out=out)
    lock = out / ".edgebench.lock"
    lock.write_text("{}")
    SPOILERS[how][0](lock)
    with pytest.raises(UserError, match=r"\.edgebench\.lock: the run lock is not a regular file"):
        run_fake(['{"a": 1}'] * 3, out=out, resume=True)
    lock.unlink()
    lock.write_text("[" * 4096)  # a holder too deep to read is no holder
    run_fake(['{"a": 1}'] * 3, out=out, resume=True)


# -- red team pass 2: what the typed records let through -------------------------------
def _edit_manifest(run: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads((run / "manifest.json").read_text())
    edit(data)
    (run / "manifest.json").write_text(json.dumps(data))


@pytest.mark.parametrize("name", ["compare", "card", "score"])
def test_an_arm_naming_none_of_the_runs_models_is_one_line(
    name: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited manifest whose arm names no model (models emptied, a label changed
    in one place) was a StopIteration traceback in every reader."""
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    _edit_manifest(run, lambda m: m.update(models=[]))
    code, err = run_cli(capsys, *command(name, run, tmp_path))
    assert_one_line_error(code, err, "manifest.json", "arms[0].model", "none of the run's models")


def test_a_number_too_large_for_a_float_is_one_line(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """400 digits pass the integer limit, but not float(): an OverflowError traceback."""
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    _edit_manifest(run, lambda m: m.update(wall_s=10**400))
    code, err = run_cli(capsys, "compare", str(run))
    assert_one_line_error(code, err, "manifest.json", "wall_s", "too large")


def test_nan_where_a_figure_is_rounded_is_shown_not_a_traceback(
    clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NaN is read back (Python writes it); the card rounded the run's wall clock."""
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    _edit_manifest(run, lambda m: m.update(wall_s=float("nan")))
    code, err = run_cli(capsys, "card", str(run), "--out", str(tmp_path / "card.md"))
    assert code == 0, err
    assert "| whole run (s) | nan |" in (tmp_path / "card.md").read_text()


def _lone_surrogates(clean_run: Path, tmp_path: Path) -> Path:
    """The run with its model's label "\\udc80m\\ud800" in every file (JSON escapes)."""
    run = tmp_path / "runs" / "run"
    shutil.copytree(clean_run, run)
    label = json.loads((run / "manifest.json").read_text())["models"][0]["label"]
    for name in ("manifest.json", "samples.jsonl", "summary.json"):
        text = (run / name).read_text()
        (run / name).write_text(text.replace(f'"{label}"', '"\\udc80m\\ud800"'))
    return run


@pytest.mark.parametrize("name", ["card", "report", "ingest"])
def test_lone_surrogates_in_names_are_written_escaped(
    name: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name holding a lone surrogate (valid JSON, not UTF-8) ended card, report (the
    plots, the page's write) and db ingest (SQLite) in a UnicodeEncodeError; a string
    field of a record now reads it as its escape."""
    run = _lone_surrogates(clean_run, tmp_path)
    db = tmp_path / "r.db"
    args = ["db", "ingest", str(run), "--db", str(db)] if name == "ingest" else None
    code, err = run_cli(capsys, *(args or command(name, run, tmp_path)))
    assert code == 0, err
    if name == "ingest":
        code, err = run_cli(capsys, "card", str(db), "--out", str(tmp_path / "card.md"))
        assert code == 0, err
        name = "card"
    written = tmp_path / ("card.md" if name == "card" else "report.html")
    assert "\\udc80m\\ud800" in written.read_text(encoding="utf-8")


def test_lone_surrogates_in_names_are_read_as_their_escapes(
    clean_run: Path, tmp_path: Path
) -> None:
    """What every reader then prints (compare to a UTF-8 terminal was a
    UnicodeEncodeError): the escape, never the surrogate."""
    from edgebench.runfolder.read import read_manifest, read_samples

    run = _lone_surrogates(clean_run, tmp_path)
    assert read_manifest(run).models[0].label == "\\udc80m\\ud800"
    assert {s.model for s in read_samples(run)[0]} == {"\\udc80m\\ud800"}


def _stored_with_bench(clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    from tests.helpers.db_runs import LAPTOP, write_bench

    root = tmp_path / "results"
    shutil.copytree(clean_run, root / "run")
    write_bench(root / "bench" / "b.json", LAPTOP)
    db = tmp_path / "r.db"
    code, err = run_cli(capsys, "db", "ingest", str(root), "--db", str(db))
    assert code == 0, err
    return db


STORED_ROWS = {
    "a deep bench file": (
        "UPDATE bench_files SET content = ?",
        ('{"x": ' + DEEP + "}").encode(),
        "stored bench",
    ),
    "a bench file name with a NUL": ("UPDATE benches SET file = ?", "/a/b\0c", "'/a/b\\x00c'"),
    "a run folder name with a NUL": ("UPDATE runs SET folder = ?", "/a/b\0c", "'/a/b\\x00c'"),
    "a run folder name with a line break": ("UPDATE runs SET folder = ?", "/a\nb", "'/a\\nb'"),
}


@pytest.mark.parametrize("case", sorted(STORED_ROWS))
def test_a_hostile_stored_bench_or_name_is_one_line_naming_the_database(
    case: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stored bench file was read from the throwaway folder (its error named that
    folder); a stored name with a NUL byte was a ValueError traceback."""
    db = _stored_with_bench(clean_run, tmp_path, capsys)
    sql, value, fragment = STORED_ROWS[case]
    with sqlite3.connect(db) as conn:
        conn.execute(sql, (value,))
    conn.close()
    code, err = run_cli(capsys, "report", str(db), "--out", str(tmp_path / "r.html"))
    if "line break" in case:  # a name the file system takes: shown escaped, or fine
        assert code == 0 or (code == 2 and fragment in err), err
        return
    assert_one_line_error(code, err, str(db), fragment)
    assert "edgebench-db-" not in err


@pytest.mark.parametrize("how", ["fifo", "device", "dangling"])
@pytest.mark.parametrize("name", ["ingest", "export", "compare"])
def test_a_database_path_that_is_not_a_regular_file_is_one_line(
    how: str, name: str, clean_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO or a link to a device as the .db was SQLite's 'disk I/O error' (ingest,
    export) or 'no such run folder' (compare)."""
    db = tmp_path / "r.db"
    if how == "fifo":
        os.mkfifo(db)
    else:
        db.symlink_to("/dev/zero" if how == "device" else tmp_path / "nowhere")
    args = {
        "ingest": ["db", "ingest", str(clean_run), "--db", str(db)],
        "export": ["db", "export", "--db", str(db), "--csv", str(tmp_path / "csv")],
        "compare": ["compare", str(db)],
    }[name]
    code, err = run_cli(capsys, *args)
    fragment = "not a run folder" if name == "compare" else "the database is"
    assert_one_line_error(code, err, str(db), fragment)
