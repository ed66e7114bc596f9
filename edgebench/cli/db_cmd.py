"""`edgebench db`: run folders into one SQLite results database, and its tables out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.choices import DEFAULT_DB
from edgebench.cli.console import stdout_console
from edgebench.errors import UserError

db_app = typer.Typer(
    help="A SQLite results database of many runs and devices: ingest run folders, "
    "export its tables; compare, card and report read it like run folders.",
    no_args_is_help=True,
)

DbOpt = Annotated[
    Path,
    typer.Option("--db", metavar="FILE", help="The results database (default: edgebench.db here)."),
]


@db_app.command("ingest")
def ingest(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR",
            help="Run folders, or folders of run folders (a plan's or a fleet's results): "
            "every folder under it with a manifest.json.",
        ),
    ],
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Store run folders in the database, each checked against the published run format
    first; the same run again changes nothing, a run grown by --resume replaces its rows.
    Exit 1 when a folder was refused (the others are stored).

    Example: edgebench db ingest fleet-results/ --db results.db
    """
    if ingest_and_print(db, run_dirs)["refused"]:
        raise typer.Exit(1)


def ingest_and_print(db: Path, paths: list[Path]) -> dict[str, int]:
    """`paths` stored in `db` as `db ingest` does, printing a line per folder (a refused
    one on stderr) and the summary line; how many were added, replaced, unchanged and
    refused. A database problem is a UserError (one line)."""
    from edgebench.db.ingest import ingest as ingest_runs
    from edgebench.db.schema import open_db

    console = stdout_console()
    conn = open_db(db, create=True)
    counts = {"added": 0, "replaced": 0, "unchanged": 0, "refused": 0}
    try:
        for done in ingest_runs(conn, paths):
            counts[done.outcome] += 1
            if done.outcome == "refused":
                typer.echo(f"refused: {done.detail}", err=True)
            else:
                console.print(
                    f"{done.outcome}: {done.folder}", markup=False, highlight=False, soft_wrap=True
                )
    finally:
        conn.close()
    console.print(
        f"{db}: " + ", ".join(f"{n} {what}" for what, n in counts.items()),
        markup=False,
        highlight=False,
        soft_wrap=True,  # a line per folder at any width: what a script or grep reads
    )
    return counts


@db_app.command("export")
def export(
    db: DbOpt = DEFAULT_DB,
    csv_dir: Annotated[
        Path | None,
        typer.Option("--csv", metavar="DIR", help="Write one CSV file per table into DIR."),
    ] = None,
    parquet_dir: Annotated[
        Path | None,
        typer.Option(
            "--parquet",
            metavar="DIR",
            help="Write one Parquet file per table into DIR (needs pyarrow: "
            "pip install 'edgebench[parquet]').",
        ),
    ] = None,
) -> None:
    """Write the database's tables (devices, runs, arms, arm_metrics,
    arm_group_metrics, differences, samples, sample_scores, benches, bench_rows) as CSV
    or Parquet files.

    Example: edgebench db export --db results.db --csv tables/
    """
    from edgebench.db.export import export_csv, export_parquet
    from edgebench.db.schema import open_db

    if (csv_dir is None) == (parquet_dir is None):
        raise UserError("edgebench db export: give one of --csv DIR or --parquet DIR")
    conn = open_db(db)
    try:
        if csv_dir is not None:
            written = export_csv(conn, db, csv_dir)
        else:
            assert parquet_dir is not None
            written = export_parquet(conn, db, parquet_dir)
    finally:
        conn.close()
    for path in written:
        typer.echo(f"wrote {path}")
