"""`edgebench score`: re-score a stored run folder without a model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.console import escape, stderr_console
from edgebench.cli.options import JsonOpt, MetricParamOpt, MetricsOpt, ParseOpt


def score(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (edgebench run or consistency).")],
    metrics: MetricsOpt = None,
    metric_param: MetricParamOpt = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset", metavar="FILE", help="The run's dataset, if it is no longer where it was."
        ),
    ] = None,
    schemas: Annotated[
        Path | None, typer.Option("--schemas", metavar="DIR", help="Its schema folder, likewise.")
    ] = None,
    parse: ParseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-score a stored run without a model.

    The raw outputs are parsed and scored again (the task's scores and the metric
    families), and samples.jsonl, manifest.json and summary.json are replaced atomically.
    Without --metrics the run's own families and parameters are used, and without
    --parse the run's extraction mode, which reproduces its summary; --parse re-scores
    with the other mode and records it.

    Example: edgebench score runs/20261122T101500-smollm2-135m-instruct-edgejson

    Example: edgebench score RUN_DIR --metrics structure,sted,sobench

    Example: edgebench score RUN_DIR --parse reference
    """
    from edgebench.cli.output import show_summary
    from edgebench.metrics import parse_metric_params, parse_metrics
    from edgebench.report.table import render
    from edgebench.rescore import rescore

    result = rescore(
        run_dir,
        metrics=parse_metrics(metrics) if metrics is not None else None,
        metric_params=parse_metric_params(metric_param or []),
        dataset=dataset,
        schemas=schemas,
        parse=parse,
        note=lambda message: stderr_console().print(f"warning: {escape(message)}", soft_wrap=True),
    )
    show_summary(result.summary, render, as_json)
    stderr_console().print(
        f"re-scored: [bold]{escape(str(result.run_dir / 'summary.json'))}[/]", soft_wrap=True
    )
