"""`edgebench compare`: one table of constraint modes across one or more run folders."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.console import stdout_console
from edgebench.cli.options import FormatOpt
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
        bool,
        typer.Option("--json", help="Print the rows as JSON instead of a table (--format json)."),
    ] = False,
    device: DeviceOpt = None,
    output_format: FormatOpt = "table",
) -> None:
    """Put constraint modes side by side: accuracy, TTFT, decode tok/s and its ratio to
    `none`, grammar compile times, KL and top-1 agreement of quantized variants
    (when the run measured them), time per decode-loop call (mask, guard, forward
    pass); for schema engines, their coverage per subset.

    At 80 columns the modes stay side by side: the columns a narrow terminal cannot
    hold are left out and named under the table (--format md or csv has every column).

    Example: edgebench compare runs/20261122T101500-smollm2-135m-instruct-edgejson

    Example: edgebench compare runs/20261122T101500-smollm2-135m-instruct-edgejson --format md
    """
    from edgebench.report.compare import (
        compare_rows,
        compare_table,
        compare_view,
        differences_table,
    )
    from edgebench.report.coverage import coverage_table
    from edgebench.report.fit import fitted
    from edgebench.report.formats import chosen_format, csv_text, markdown
    from edgebench.report.steps import step_table
    from edgebench.runfolder.read import read_fidelity
    from edgebench.summary import load_run

    shown_as = chosen_format(output_format, as_json)
    with ExitStack() as stack:
        folders = run_sources(run_dirs, stack, device)
        runs = [load_run(path) for path in folders]
        summaries = [run.summary for run in runs]
        devices = [run.manifest.device for run in runs]
        fidelity = [read_fidelity(path) for path in folders]
    if shown_as == "json":
        manifests = [run.manifest for run in runs]
        typer.echo(json.dumps(compare_rows(summaries, fidelity, devices, manifests), indent=2))
        return
    if shown_as == "csv":  # the one table with a row per mode
        typer.echo(csv_text(compare_table(summaries, fidelity, devices)), nl=False)
        return
    # Arm minus arm with paired intervals; time per decode-loop phase; schema engines
    # per subset (JSONSchemaBench).
    more = (differences_table(summaries), step_table(summaries), coverage_table(summaries))
    if shown_as == "md":
        typer.echo(markdown([compare_table(summaries, fidelity, devices), *more]), nl=False)
        return
    # Each table fits the terminal, names and numbers whole (report/fit.py).
    stdout_console().print(compare_view(summaries, fidelity, devices), fitted(*more))
