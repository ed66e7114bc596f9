"""The built-in EdgeJSON-style dataset: a seeded generator of prose extraction tasks over
the project's own schema types, and the checks that validate any dataset in that format.

    write_dataset(out_dir, seed)    -> test.jsonl, schemas/<complexity>/<id>.json, generation.json
    run_checks(read_edgejson(...), builtin=...)   -> one CheckResult per check

The dataset itself is read by `edgebench.tasks.formats.edgejson.read_edgejson`, the reader
`edgebench run` uses.
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
from edgebench.datagen.edgejson.outcome import CheckResult, Status
from edgebench.datagen.edgejson.validate import run_checks

__all__ = [
    "DATASET_FILE",
    "DEFAULT_EXAMPLES_PER_SCHEMA",
    "DEFAULT_SEED",
    "CheckResult",
    "Status",
    "generate_rows",
    "render_files",
    "run_checks",
    "write_dataset",
]
