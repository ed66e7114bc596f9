"""The JSONSchemaBench release as published on GitHub (guidance-ai/jsonschemabench):
`data/<Subset>/<name>.json`, one JSON Schema per file, no answers.

`--dataset` may name the repository (its `data/` folder is used), the `data/` folder
(every sub-folder holding `.json` files is a subset, e.g. Github_easy, Kubernetes), or one
subset's folder. The Hugging Face copy (epfl-dlab/JSONSchemaBench: parquet files with the
columns `json_schema` and `unique_id`) needs a parquet reader edgebench does not ship, so
a folder of `.parquet` files is refused in one line that says which layout to use.

Each file must be UTF-8 JSON holding an object; anything else is a one-line UserError
naming the file (the published files are all JSON objects). Whether the schema is a
valid JSON Schema is *not* checked here: the release holds real-world schemas (drafts 04
to 2020-12, `$ref`s, `format`s) that an engine or the validator may refuse, and such a
refusal is a result recorded per row, never a reason to stop the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.io import read_text_file
from edgebench.tasks.formats.jsonl import json_object

SCHEMA_SUFFIX = ".json"


@dataclass(frozen=True)
class ReleaseSchema:
    """One schema of the release: its subset (the folder), name (file stem) and content."""

    subset: str
    name: str
    path: Path
    schema: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.subset}/{self.name}"


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == SCHEMA_SUFFIX)


def _subset_folders(root: Path) -> list[Path]:
    """Sub-folders of `root` that hold schema files, by name."""
    return sorted(p for p in root.iterdir() if p.is_dir() and _files(p))


def _refuse_parquet(root: Path) -> None:
    parquet = next(iter(sorted(root.rglob("*.parquet"))), None)
    if parquet is not None:
        raise UserError(
            f"{parquet}: the Hugging Face parquet files are not read; give the GitHub "
            "release's data/ folder (data/<Subset>/<name>.json, one schema per file)"
        )


def schema_root(dataset: Path) -> Path:
    """The folder whose sub-folders are the subsets (or which is one subset itself)."""
    if not dataset.exists():
        raise UserError(f"{dataset}: dataset folder not found")
    if not dataset.is_dir():
        raise UserError(
            f"{dataset}: the schemas task reads a folder laid out like the JSONSchemaBench "
            "release (data/<Subset>/<name>.json), not a file"
        )
    data = dataset / "data"
    if data.is_dir() and not _subset_folders(dataset) and not _files(dataset):
        return data  # the repository's root
    return dataset


def read_schemas(dataset: Path) -> list[ReleaseSchema]:
    """Every schema under `dataset`, subsets in name order, files in name order."""
    root = schema_root(dataset)
    folders = _subset_folders(root)
    if not folders and _files(root):
        folders = [root]  # one subset's folder
    if not folders:
        _refuse_parquet(root)
        raise UserError(
            f"{root}: no schema files (expected <Subset>/<name>.json, as the release's data/)"
        )
    return [
        ReleaseSchema(folder.name, path.stem, path, _read(path))
        for folder in folders
        for path in _files(folder)
    ]


def _read(path: Path) -> dict[str, Any]:
    text = read_text_file(path, "schema file")
    if not text.strip():
        raise UserError(f"{path}: empty schema file")
    return json_object(text, str(path))
