"""`edgebench compare`: one table of constraint modes across one or more run folders."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.console import stdout_console
from edgebench.cli.sources import DeviceOpt, run_sources


def compare(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR",
            help="Run folders written by `edgebench run`, or results databases (.db) of "
            "`edgebench db ingest`.",
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the rows as JSON instead of a table.")
    ] = False,
    device: DeviceOpt = None,
) -> None:
    """Put constraint modes side by side: accuracy, TTFT, decode tok/s and its ratio to
    `none`, grammar compile times, KL and top-1 agreement of quantized variants
    (when the run measured them), time per decode-loop call (mask, guard, forward
    pass); for schema engines, their coverage per subset.

    Example: edgebench compare runs/20261122T101500-smollm2-135m-instruct-edgejson
    """
    from edgebench.report.compare import compare_rows, compare_table, differences_table
    from edgebench.report.coverage import coverage_table
    from edgebench.report.fit import fitted
    from edgebench.report.steps import step_table
    from edgebench.runfolder.read import read_fidelity
    from edgebench.summary import load_run

    with ExitStack() as stack:
        folders = run_sources(run_dirs, stack, device)
        runs = [load_run(path) for path in folders]
        summaries = [run.summary for run in runs]
        devices = [run.manifest.device for run in runs]
        fidelity = [read_fidelity(path) for path in folders]
    if as_json:
        typer.echo(json.dumps(compare_rows(summaries, fidelity, devices), indent=2))
        return
    # Arm minus arm with paired intervals; time per decode-loop phase; schema engines
    # per subset (JSONSchemaBench).
    # Each table fits the terminal, names and numbers whole (report/fit.py).
    stdout_console().print(
        fitted(
            compare_table(summaries, fidelity, devices),
            differences_table(summaries),
            step_table(summaries),
            coverage_table(summaries),
        )
    )
