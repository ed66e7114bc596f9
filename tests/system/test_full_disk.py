"""A real full file system (a tmpfs of a few hundred KB, filled to within N KB): `edgebench
run` (on the fake model, tests/helpers/fault_cli.py) at every amount of room left, from
none (the run lock cannot be written) to enough, ends in one line that says how to go
on, never a traceback; the manifest says how the run ended wherever there was room for
it; following the hint once space is freed completes the run. `db ingest` on a full disk
names the full disk. Mounting needs root: skipped otherwise, and under CI=true (the
unit tests inject the same ENOSPC: tests/unit/runner/test_disk_and_signals.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAULT_CLI = REPO / "tests" / "helpers" / "fault_cli.py"
N = 8


def _mount(where: Path, size: str) -> Iterator[Path]:
    if os.environ.get("CI") == "true":
        pytest.skip("no mounts under CI (the unit tests inject ENOSPC instead)")
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    yield from _mount(tmp_path / "fs", "256k")


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    yield from _mount(tmp_path / "fs", "1m")


def fill(fs: Path, leave: int) -> Path:
    """Fill `fs` up, then free `leave` bytes of it; the file that fills it."""
    filler = fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, bytes(4096))
    except OSError:
        pass
    finally:
        os.close(fd)
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def edgebench_fake(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(FAULT_CLI), "0", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def edgebench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edgebench", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def last_line(err: str) -> str:
    return [line for line in err.splitlines() if line.strip()][-1]


@pytest.mark.parametrize("room_kb", [0, 8, 24, 40, 64, 200])
def test_a_run_on_a_full_disk_is_one_line_and_its_hint_finishes_it(
    tiny_fs: Path, tmp_path: Path, room_kb: int
) -> None:
    payloads = tmp_path / "payloads.jsonl"
    payloads.write_text("".join(f'{{"k{i}": {i}}}\n' for i in range(N)))
    out = tiny_fs / "run"
    command = ["run", "--task", "roundtrip", "--dataset", str(payloads), "--out", str(out)]
    filler = fill(tiny_fs, room_kb * 1024)
    done = edgebench_fake(*command)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    manifest = out / "manifest.json"
    if done.returncode == 1:
        line = last_line(done.stderr)
        assert line.startswith("error: could not write ") and "No space left on device" in line
        if manifest.exists():
            resume = f"edgebench run --resume {out}"
            assert line.endswith(f"free space, then continue with `{resume}`"), line
            status = json.loads(manifest.read_text())["status"]
            # the manifest says how the run ended wherever there was room for it
            assert status == "failed" or room_kb < 20, status
            again = ["run", "--resume", str(out)]
        else:
            assert line.endswith("nothing was written; free space, then run the same command again")
            assert not out.exists() or not any(out.iterdir())
            again = command
        filler.unlink()  # space freed: the hint finishes the run
        done = edgebench_fake(*again)
        assert done.returncode == 0, done.stderr
    stored = json.loads(manifest.read_text())
    assert stored["status"] == "completed"
    ids = [json.loads(line)["id"] for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == N  # each example once, none lost, none twice
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "samples.jsonl",
        "summary.json",
        "timeline.jsonl",
    ]


def test_db_ingest_on_a_full_disk_names_the_full_disk(small_fs: Path, tmp_path: Path) -> None:
    payloads = tmp_path / "payloads.jsonl"
    payloads.write_text("".join(f'{{"k{i}": {i}}}\n' for i in range(N)))
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        common = ["--task", "roundtrip", "--dataset", str(payloads), "--out", str(out)]
        assert edgebench_fake("run", *common).returncode == 0
        runs.append(out)
    db = small_fs / "results.db"
    assert edgebench("db", "ingest", str(runs[0]), "--db", str(db)).returncode == 0
    filler = fill(small_fs, 24 * 1024)
    done = edgebench("db", "ingest", str(runs[1]), "--db", str(db))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        f"error: {runs[1]}: not stored: the disk is full (database or disk is full); what "
        "was stored before is kept: free space, then run the same ingest again"
    ]
    filler.unlink()
    done = edgebench("db", "ingest", str(runs[0]), str(runs[1]), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "1 added, 0 replaced, 1 unchanged" in done.stdout
