"""`edgebench consistency`: sample each prompt N times per temperature and measure how
much the answers agree (STED and the consistency score, paper 002)."""

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
from edgebench.errors import UserError
from edgebench.metrics import get_family, parse_metric_params
from edgebench.report.table import RichProgress, render_consistency
from edgebench.runner.consistency import ConsistencySettings, execute_consistency
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.run import RunSettings
from edgebench.tasks import get_task


def parse_temperatures(text: str) -> tuple[float, ...]:
    values = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            values.append(float(part))
        except ValueError:
            raise UserError(f"--temperatures: '{part}' is not a number") from None
    return tuple(dict.fromkeys(values))


@app.command()
def consistency(
    model: ModelOpt = None,
    task: TaskOpt = "edgejson",
    samples: Annotated[
        int, typer.Option("--samples", "-s", min=2, help="Generations per prompt and temperature.")
    ] = 5,
    temperatures: Annotated[
        str, typer.Option("--temperatures", help="Sampling temperatures, comma-separated (> 0).")
    ] = "0.2,0.5,0.8",
    seed: Annotated[
        int,
        typer.Option(
            "--seed", min=0, help="Seed of the first generation; generation i uses seed + i."
        ),
    ] = 0,
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
            "--constraint", "-c", help="One constraint mode: none, json, gbnf, outlines, mask."
        ),
    ] = "none",
    warmup: WarmupOpt = True,
    guard: GuardOpt = True,
    metric_param: MetricParamOpt = None,
) -> None:
    """Sample every prompt N times at each temperature (seeded) and score how consistent
    the answers are: pairwise STED and the consistency score per prompt and temperature,
    with structural-only and semantic-only variants.

    Example: edgebench consistency --samples 5 --limit 10 --temperatures 0.2,0.5,0.8

    Example: edgebench consistency --task roundtrip --constraint gbnf --limit 5
    """
    console = Console(stderr=True)
    modes = parse_modes(constraint)
    if len(modes) != 1:
        raise UserError("--constraint: consistency runs one constraint mode at a time")
    params = parse_metric_params(metric_param or [])
    unknown = [name for name in params if name != "sted"]
    if unknown:
        raise UserError(
            f"--metric-param: consistency uses only sted.* parameters, not '{unknown[0]}'"
        )
    sted_family = get_family("sted", params.get("sted"))
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
        constraints=tuple(modes),
        guard=guard,
    )
    spec = ConsistencySettings(
        samples=samples,
        temperatures=parse_temperatures(temperatures),
        seed=seed,
        constraint=modes[0],
        sted=sted_family.params,
    )
    task_impl = get_task(settings.task)
    examples, dataset_info = load_examples(task_impl, settings)
    model_info = model_under_test(settings.model)
    result = execute_consistency(
        settings,
        spec,
        model_info,
        task_impl,
        examples,
        dataset_info,
        progress=RichProgress(console),
    )
    out_console = stdout_console()
    out_console.print(render_consistency(result.summary))
    console.print(f"run folder: [bold]{result.run_dir}[/]")
