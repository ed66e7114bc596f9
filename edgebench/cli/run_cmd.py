"""`edgebench run`: benchmark one model on one task and print the summary."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from edgebench.cli.app import app, stdout_console
from edgebench.cli.options import (
    DatasetOpt,
    GuardOpt,
    LimitOpt,
    MaxTokensOpt,
    MetricParamOpt,
    MetricsOpt,
    ModelOpt,
    NCtxOpt,
    OutOpt,
    SchemasOpt,
    TaskOpt,
    ThreadsOpt,
    WarmupOpt,
    default_threads,
)
from edgebench.constraints import parse_modes
from edgebench.metrics import parse_metric_params, parse_metrics, select_families
from edgebench.report.table import RichProgress, render_summary
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks import get_task


@app.command()
def run(
    model: ModelOpt = None,
    task: TaskOpt = "edgejson",
    dataset: DatasetOpt = None,
    schemas: SchemasOpt = None,
    limit: LimitOpt = None,
    threads: ThreadsOpt = None,
    max_tokens: MaxTokensOpt = None,
    n_ctx: NCtxOpt = None,
    out: OutOpt = None,
    constraint: Annotated[
        str,
        typer.Option(
            "--constraint",
            "-c",
            help="Constraint modes, comma-separated, each run on the same examples: "
            "none, json, gbnf, outlines, mask.",
        ),
    ] = "none",
    warmup: WarmupOpt = True,
    guard: GuardOpt = True,
    metrics: MetricsOpt = None,
    metric_param: MetricParamOpt = None,
) -> None:
    """Decode every example greedily and record accuracy, latency, tokens/s and peak memory.

    Example: edgebench run --model smollm2-135m-instruct --limit 20 --threads 2

    Example: edgebench run --constraint none,gbnf,mask --limit 20

    Example: edgebench run --task roundtrip --limit 20 --metrics sted,sobench
    """
    console = Console(stderr=True)
    settings = RunSettings(
        model=model,
        task=task,
        dataset=dataset,
        schemas=schemas,
        limit=limit,
        threads=threads or default_threads(),
        max_tokens=max_tokens,
        n_ctx=n_ctx,
        out=out,
        warmup=warmup,
        constraints=tuple(parse_modes(constraint)),
        guard=guard,
        metrics=parse_metrics(metrics),
        metric_params=parse_metric_params(metric_param or []),
    )
    task_impl = get_task(settings.task)
    select_families(task_impl, settings.metrics, settings.metric_params)  # errors first
    examples, dataset_info = load_examples(task_impl, settings)
    model_info = model_under_test(settings.model)
    result = execute(
        settings,
        model_info,
        task_impl,
        examples,
        dataset_info,
        progress=RichProgress(console),
    )
    out_console = stdout_console()
    out_console.print(render_summary(result.summary))
    console.print(f"run folder: [bold]{result.run_dir}[/]")
