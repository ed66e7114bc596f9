"""Reading a run folder in tests: its manifest and summary, and the content of its samples
that a resumed run must share with an uninterrupted one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from edgebench.io import read_jsonl


def manifest_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "manifest.json").read_text())


def summary_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def sample_content(run_dir: Path) -> list[tuple[Any, ...]]:
    """What must be identical between runs, sample by sample: model, mode, index, id,
    output, parse, scores, finish (not timings, not the time of day)."""
    return [
        (
            s["model"],
            s["constraint"],
            s["index"],
            s["id"],
            s["raw_output"],
            s["parsed"],
            s["scores"],
            s["finish_reason"],
        )
        for s in read_jsonl(run_dir / "samples.jsonl")
    ]
