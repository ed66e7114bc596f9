"""Reading a run folder in tests: its manifest and summary, its final samples, and the
content of its samples that a resumed run must share with an uninterrupted one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from edgebench.runfolder.read import read_samples


def manifest_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "manifest.json").read_text())


def summary_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def final_samples(run_dir: Path) -> list[dict[str, Any]]:
    """samples.jsonl as readers take it: a re-timed example's later line (a real model on
    a busy machine re-times contended examples) in place of its first."""
    return [sample.to_json() for sample in read_samples(run_dir)[0]]


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
        for s in final_samples(run_dir)
    ]
