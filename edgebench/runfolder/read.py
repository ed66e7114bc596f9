"""Reading a run folder's files back: one-line errors for anything unreadable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import read_jsonl_checked

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run folder's manifest, or a one-line error saying what is wrong with it."""
    manifest_path = run_dir / MANIFEST
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
    return manifest


def read_samples(run_dir: Path) -> tuple[list[dict[str, Any]], bool]:
    """The run's sample records and whether a torn last line was left out."""
    path = run_dir / SAMPLES
    return read_jsonl_checked(path) if path.is_file() else ([], False)
