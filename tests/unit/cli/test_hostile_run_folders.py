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
