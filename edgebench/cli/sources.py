"""Where `compare`, `card` and `report` take their runs from: run folders (and bench
files) as given, and results databases, whose runs are written out as folders for the
command's duration so they read exactly as the folders that were ingested."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from edgebench.errors import UserError

DeviceOpt = Annotated[
    str | None,
    typer.Option(
        "--device",
        metavar="NAME",
        help="With a .db: only the runs of this device (its name, fingerprint, unit_id "
        "or model_id).",
    ),
]


def is_db_path(path: Path) -> bool:
    from edgebench.db.schema import is_database

    return path.is_file() and (path.suffix.lower() == ".db" or is_database(path))


def run_sources(
    paths: list[Path],
    stack: ExitStack,
    device: str | None = None,
    run: str | None = None,
    benches: bool = False,
) -> list[Path]:
    """`paths` with each results database replaced by its runs (of `device`, of `run`;
    with `benches`, its bench files too), written under a temporary folder that `stack`
    removes."""
    from edgebench.db.runs import write_runs

    if (device is not None or run is not None) and not any(map(is_db_path, paths)):
        option = "--device" if device is not None else "--run"
        raise UserError(f"{option} selects runs of a results database (.db); none was given")
    expanded: list[Path] = []
    for index, path in enumerate(paths):
        if not is_db_path(path):
            expanded.append(path)
            continue
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="edgebench-db-")))
        expanded += write_runs(path, root / str(index), device, run, benches)
    return expanded
