"""Fake run folders of two devices for the results database: each device ran two
quantizations of one model under `none` and `mask`, with a made-up peak RSS per
quantization (a fake worker measures none). Q8_0 answers every example right; Q4_K_M
answers the first right and the others with text that is not JSON."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from edgebench.db import schema
from edgebench.db.schema import DB_VERSION, open_db
from edgebench.runfolder.records import SCHEMA_VERSION, BenchModel, BenchRecord, BenchRow
from edgebench.system.records import Device
from edgebench.tasks import get_task
from tests.helpers.report_runs import make_run

PI5 = {
    "cpu_model": "Cortex-A76",
    "board_model": "Raspberry Pi 5 Model B Rev 1.0",
    "machine": "aarch64",
    "ram_total_mb": 8064,
    "logical_cores": 4,
    "os": "Debian 12",
}
LAPTOP = {
    "cpu_model": "Intel Core i5-8250U",
    "machine": "x86_64",
    "ram_total_mb": 15872,
    "logical_cores": 8,
    "os": "Ubuntu 24.04",
}
DEVICES = {"pi5": PI5, "laptop": LAPTOP}
# quantization -> (file size, peak RSS in MB): Q8_0 is over 4 GB on purpose
QUANTS = {"Q4_K_M": (2_000_000_000, 2500.0), "Q8_0": (4_000_000_000, 4500.0)}


def with_model_facts(run_dir: Path, quant: str, size: int, peak_rss_mb: float) -> None:
    """The run's model as a `quant` file of `size` bytes whose arms peaked at
    `peak_rss_mb` (the same shapes a real run writes)."""
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    for model in manifest["models"]:
        model.update(quantization=quant, size_bytes=size)
    for arm in manifest["arms"]:
        arm["memory"] = {
            "peak_rss_mb": peak_rss_mb,
            "peak_rss_anon_mb": None,
            "peak_rss_file_mb": None,
            "samples": 3,
            "source": "proc",
        }
    path.write_text(json.dumps(manifest))


def answers(n: int, right: int) -> list[str]:
    """The first `right` of the built-in EdgeJSON examples' expected answers, then
    text that is not JSON."""
    task = get_task("edgejson")
    examples = task.load(*task.resolve_paths(None, None))[:n]
    return [json.dumps(ex.expected) if i < right else "no idea" for i, ex in enumerate(examples)]


def make_fleet_runs(root: Path, n: int = 3) -> list[Path]:
    """root/<device>/<quant>: one completed run folder per device and quantization,
    `none` and `mask` arms of `n` examples each."""
    folders = []
    for device_name, device in DEVICES.items():
        for quant, (size, rss) in QUANTS.items():
            outputs = answers(n, n if quant == "Q8_0" else 1)
            folder = make_run(
                root / device_name / quant, modes="none,mask", n=n, device=device, outputs=outputs
            )
            with_model_facts(folder, quant, size, rss)
            folders.append(folder)
    return folders


def write_bench(path: Path, device: dict, started_at: str = "2026-11-26T07:00:00+00:00") -> Path:
    """A completed `edgebench bench --out` file of one Q4_K_M model at 4 threads: pp64
    at 120 tok/s and tg32 at 20 tok/s."""
    rows = [
        BenchRow(threads=4, test=test, kind=test[:2], n_tokens=int(test[2:]), depth=0,
                 repetitions=3, tok_s_mean=speed, tok_s_std=0.5, tok_s_cv=0.5 / speed,
                 peak_rss_mb=300.0, model="fake", quantization="Q4_K_M")
        for test, speed in (("pp64", 120.0), ("tg32", 20.0))
    ]  # fmt: skip
    record = BenchRecord(
        kind="edgebench-bench",
        status="completed",
        started_at=started_at,
        settings={"threads": [4]},
        device=Device.from_json(device),
        schema_version=SCHEMA_VERSION,
        models=[BenchModel(label="fake", path="/m/fake.gguf", sha256="0" * 64,
                           size_bytes=100, backend="llama", quantization="Q4_K_M")],
        results=rows,
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record.to_json()))
    return path


def _newer(path: Path) -> None:
    open_db(path, create=True).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'db_version'")


def _corrupt(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE other (x)")


# Files a --db FILE cannot be, each made at a path, and what its one-line error says.
BAD_DATABASES: dict[str, tuple[Callable[[Path], object], str]] = {
    "not sqlite": (lambda p: p.write_text("name,score\n"), "not a SQLite database file"),
    "a folder": (lambda p: p.mkdir(), "a folder, not a database file"),
    "newer": (_newer, f"version 99, but this edgebench reads version {DB_VERSION}"),
    "corrupt": (_corrupt, "corrupt"),
    "foreign": (_foreign, "not an edgebench results database"),
}


@contextmanager
def write_locked(db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`db` held by another writer mid-transaction for the block (edgebench waits 0.05 s
    for it, not 5 s)."""
    monkeypatch.setattr(schema, "LOCK_WAIT_S", 0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.close()


def as_version_2(db: Path) -> None:
    """The database as version 2 wrote it: no interval but the speed ones."""
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE arm_group_metrics")
        conn.execute("DROP TABLE differences")
        conn.execute("ALTER TABLE arm_metrics DROP COLUMN value_lo")
        conn.execute("ALTER TABLE arm_metrics DROP COLUMN value_hi")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'db_version'")
