"""The built-in EdgeJSON-style dataset: a seeded generator of prose extraction tasks over
the project's own schema types, and the checks that validate any dataset in that format.

    write_dataset(out_dir, seed)    -> test.jsonl, schemas/<complexity>/<id>.json, generation.json
    run_checks(load_dataset(...))   -> one CheckResult per check
"""

from __future__ import annotations

from edgebench.datagen.edgejson.generator import (
    DATASET_FILE,
    DEFAULT_EXAMPLES_PER_SCHEMA,
    DEFAULT_SEED,
    generate_rows,
    render_files,
    write_dataset,
)
from edgebench.datagen.edgejson.loader import Dataset, load_dataset
from edgebench.datagen.edgejson.outcome import CheckResult, Status
from edgebench.datagen.edgejson.validate import run_checks

__all__ = [
    "DATASET_FILE",
    "DEFAULT_EXAMPLES_PER_SCHEMA",
    "DEFAULT_SEED",
    "CheckResult",
    "Dataset",
    "Status",
    "generate_rows",
    "load_dataset",
    "render_files",
    "run_checks",
    "write_dataset",
]
