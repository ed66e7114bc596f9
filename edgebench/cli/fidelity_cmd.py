"""`edgebench fidelity`: KL and top-1 agreement of a run's quantized variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.console import escape, say, stderr_console, stdout_console, stop_signals
from edgebench.cli.options import JsonOpt, LimitOpt, threads_option


def fidelity(
    run_dir: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_DIR",
            help="A run folder with two or more GGUF variants of one model.",
        ),
    ],
    limit: LimitOpt = None,
    threads: Annotated[
        int | None, threads_option("CPU threads for each model (default: the run's --threads).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure how closely each quantized variant follows the run's highest-precision one.

    Both models read the run's prompts followed by each example's expected answer; at
    every answer token the KL divergence of their next-token distributions and whether
    their top token agrees are taken (as llama-perplexity --kl-divergence does), into
    the run's fidelity.json (`edgebench run` does this after its arms).

    Example: edgebench fidelity runs/20261126T101500-smollm2-135m-instruct-edgejson --limit 20
    """
    from edgebench.cli.progress import RichProgress
    from edgebench.report.fidelity import fidelity_table
    from edgebench.runfolder.read import FIDELITY
    from edgebench.runner.fidelity import fidelity_of_run

    console = stderr_console()
    try:
        with stop_signals():
            record = fidelity_of_run(
                run_dir, limit=limit, threads=threads, progress=RichProgress(console)
            )
    except KeyboardInterrupt:
        where = escape(str(run_dir / FIDELITY))
        say(console, f"[bold yellow]interrupted:[/] the variants done so far are in {where}")
        raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps(record.to_json(), indent=2))
    else:
        stdout_console().print(fidelity_table(record))
    console.print(f"fidelity: [bold]{escape(str(run_dir / FIDELITY))}[/]", soft_wrap=True)
