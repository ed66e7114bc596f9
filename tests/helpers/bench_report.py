"""Checking the JSON report `edgebench bench` writes, for the in-process CLI tests and the
real-model ones alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def completed_bench(out: Path, threads: tuple[int, ...], tests: tuple[str, ...]) -> dict[str, Any]:
    """The bench report at `out`, which must say `completed` and hold one row per thread
    count and test, in that order (every test of the first thread count first)."""
    report = json.loads(out.read_text())
    assert report["status"] == "completed"
    rows = [(r["threads"], r["test"]) for r in report["results"]]
    assert rows == [(n, test) for n in threads for test in tests]
    return report
