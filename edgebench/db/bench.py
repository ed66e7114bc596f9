"""`edgebench bench` files in the database: found beside run folders (a plan's
`bench/<cell-id>.json`, `runs/<time>-<model>-bench.json`), validated against the
published bench schema, kept verbatim with one row per speed test."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.db.rows import Row
from edgebench.errors import UserError
from edgebench.readback import read_json
from edgebench.runfolder.read import MANIFEST, read_bench
from edgebench.runfolder.records import BenchModel, BenchRecord

if TYPE_CHECKING:  # annotations only: the identity record may live in records.py
    from edgebench.runfolder.identity import DeviceIdentity

BENCH_KIND = "edgebench-bench"


def is_bench_json(path: Path) -> bool:
    """A JSON file `edgebench bench` wrote (its `kind`), read no further than needed."""
    try:
        data = read_json(path, "bench file")
    except UserError:  # not one (a hostile file included): left alone
        return False
    return isinstance(data, dict) and data.get("kind") == BENCH_KIND


def find_benches(path: Path) -> list[Path]:
    """The bench files under `path` outside run folders (whose JSON files are the run's)."""
    if path.is_file():
        return [path] if is_bench_json(path) else []
    return sorted(
        file
        for file in path.rglob("*.json")
        if file.is_file() and not (file.parent / MANIFEST).is_file() and is_bench_json(file)
    )


def read_bench_record(path: Path) -> BenchRecord:
    """The bench file as a record (the rows-only JSON of `--format json` has no device,
    so it cannot be stored)."""
    record = read_bench(path)
    if not isinstance(record, BenchRecord):
        raise UserError(
            f"{path}: the rows of `bench --format json` carry no device; "
            "store the file of `bench --out`"
        )
    return record


def _model(record: BenchRecord, label: str | None) -> BenchModel | None:
    models = [*record.models, *([record.model] if record.model else [])]
    return next((m for m in models if m.label == label), models[0] if models else None)


def bench_rows(bench_key: str, record: BenchRecord) -> list[Row]:
    rows = []
    for number, row in enumerate(record.results, start=1):
        model = _model(record, row.model)
        facts: dict[str, Any] = {
            "bench_key": bench_key,
            "row": number,
            "model": row.model or (model.label if model else None),
            "quant_type": row.quantization or (model.quantization if model else None),
            "backend": row.backend or (model.backend if model else None),
            "size_bytes": row.size_bytes or (model.size_bytes if model else None),
            "threads": row.threads,
            "test": row.test,
            "kind": row.kind,
            "n_tokens": row.n_tokens,
            "depth": row.depth,
            "repetitions": row.repetitions,
            "tok_s_mean": row.tok_s_mean,
            "tok_s_std": row.tok_s_std,
            "tok_s_median": row.tok_s_median,
            "peak_rss_mib": row.peak_rss_mb,
        }
        rows.append(facts)
    return rows


def bench_row(
    bench_key: str, path: Path, record: BenchRecord, identity: DeviceIdentity, digest: str
) -> Row:
    return {
        "bench_key": bench_key,
        "device": identity.fingerprint,
        "device_name": identity.name,
        "file": str(path.resolve()),
        "label": path.name,
        "status": record.status,
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "edgebench_version": record.packages.get("edgebench"),
        "content_sha256": digest,
    }
