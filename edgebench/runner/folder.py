"""Reading a run folder back: its manifest and its samples, with one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import read_jsonl


def read_run_folder(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """manifest.json and samples.jsonl of a run folder (no samples yet: an empty list)."""
    manifest_path = run_dir / "manifest.json"
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: no such run folder")
    if not manifest_path.is_file():
        raise UserError(f"{run_dir}: not a run folder (no manifest.json)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{manifest_path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise UserError(f"{manifest_path}: not a run manifest (expected a JSON object)")
    samples_path = run_dir / "samples.jsonl"
    try:
        samples = read_jsonl(samples_path) if samples_path.is_file() else []
    except json.JSONDecodeError as exc:
        raise UserError(f"{samples_path}: line {exc.lineno}: not valid JSON") from None
    return manifest, samples
