"""`edgebench recommend`: which variants of a sweep fit a memory budget and are on the
Pareto front, with the reason; the others with why not; Raspberry Pi fit verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.console import stdout_console
from edgebench.cli.options import FormatOpt, JsonOpt


def recommend(
    run_dir: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_DIR",
            help="A run folder: several variants (a sweep) or one model's constraint modes.",
        ),
    ],
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            metavar="SIZE",
            help="Memory budget, e.g. 4GB, 512MB or 4GiB (GB = 10^9 bytes, GiB = 2^30); "
            "a variant needs its measured peak RSS with the KV cache at the run's context.",
        ),
    ] = None,
    min_accuracy: Annotated[
        float | None,
        typer.Option(
            "--min-accuracy",
            metavar="X",
            help="Leave out variants scoring below X (0 to 1) on --metric, e.g. 0.5.",
        ),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            metavar="NAME",
            help="The accuracy figure of the front and of --min-accuracy, e.g. field_f1, "
            "json_exact or schema_compliance (default: the task's headline figure).",
        ),
    ] = None,
    arm: Annotated[
        str | None,
        typer.Option(
            "--arm",
            metavar="MODE",
            help="Only this constraint mode of the run, e.g. mask (default: every mode).",
        ),
    ] = None,
    as_json: JsonOpt = False,
    output_format: FormatOpt = "table",
) -> None:
    """Name the variants to ship: those that fit the memory budget, reach the accuracy
    floor and are on the Pareto front (accuracy, file size, decode tok/s, peak RSS), each
    with its reason; the others with why not; and whether each fits a Raspberry Pi 4/5
    with 2, 4 or 8 GB. "No variant fits" is a result (exit 0).

    Example: edgebench recommend runs/sweep --max-memory 4GB --min-accuracy 0.5 --arm mask

    Example: edgebench recommend runs/sweep --max-memory 4GB --format md
    """
    from edgebench.analysis.recommend import parse_memory
    from edgebench.analysis.recommend import recommend as pick
    from edgebench.report.formats import chosen_format
    from edgebench.report.recommend_view import as_json as view_json
    from edgebench.report.recommend_view import formatted, render
    from edgebench.summary import load_run

    shown_as = chosen_format(output_format, as_json)
    budget = parse_memory(max_memory) if max_memory is not None else None
    result = pick(load_run(run_dir), budget, min_accuracy, metric, arm)
    if shown_as == "json":
        typer.echo(json.dumps(view_json(result), indent=2))
        return
    if shown_as != "table":
        typer.echo(formatted(result, shown_as), nl=False)
        return
    stdout_console().print(render(result))
