"""`fleet run --ingest FILE`: every host's fetched results stored in the database when the
fleet ends, as `db ingest` stores and prints them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.cli.db_cmd import ingest_and_print
from edgebench.errors import RunFailure, UserError

if TYPE_CHECKING:
    from edgebench.fleet.drive import HostResult


def later(db: Path, out: Path) -> str:
    """The command that stores the fleet's results in `db` by hand."""
    return f"edgebench db ingest {out} --db {db}"


def not_ingested(db: Path, out: Path) -> str:
    """What an interrupted fleet says about its --ingest database (nothing stored)."""
    return (
        f"; nothing was stored in {db}: the same command stores the results when the fleet "
        f"ends (what was fetched so far: `{later(db, out)}`)"
    )


def ingest_fleet(db: Path, results: dict[str, HostResult], out: Path) -> int:
    """Every host folder with run folders or bench files stored in `db` (a host whose
    results were never fetched, or hold no run yet, has nothing to store); how many
    folders were refused. A database that fails is a RunFailure naming where the results
    are kept and how to ingest them later."""
    from edgebench.db.bench import find_benches
    from edgebench.db.ingest import find_runs

    folders = [
        result.folder
        for result in results.values()
        if result.folder is not None and (find_runs(result.folder) or find_benches(result.folder))
    ]
    try:
        return ingest_and_print(db, folders)["refused"]
    except (UserError, RunFailure) as exc:
        raise RunFailure(
            f"{exc}; the fleet's results are kept in {out}: store them with `{later(db, out)}`"
        ) from None
