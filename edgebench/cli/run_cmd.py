"""`edgebench run`: benchmark one model on one task and print the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from edgebench.cli.app import app
from edgebench.cli.options import (
    LimitOpt,
    MaxTokensOpt,
    ModelOpt,
    NCtxOpt,
    OutOpt,
    ThreadsOpt,
    default_threads,
)
from edgebench.constraints import parse_modes
from edgebench.errors import UserError
from edgebench.report.table import RichProgress, render_summary
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks import get_task


def parse_model_list(text: str | None) -> list[str | None]:
    """`--model a,b` -> the model specs in order; None (the default model) when absent."""
    if text is None:
        return [None]
    specs = [part.strip() for part in text.split(",")]
    if not all(specs):
        raise UserError(f"--model: empty name in {text!r} (separate models with commas)")
    return specs


@app.command()
def run(
    model: ModelOpt = None,
    task: Annotated[str, typer.Option("--task", help="Task name.")] = "edgejson",
    dataset: Annotated[
        Path | None, typer.Option("--dataset", help="Dataset JSONL (default: built-in).")
    ] = None,
    schemas: Annotated[
        Path | None, typer.Option("--schemas", help="Folder of the dataset's JSON Schemas.")
    ] = None,
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
    warmup: Annotated[
        bool, typer.Option("--warmup/--no-warmup", help="One untimed generation first.")
    ] = True,
    guard: Annotated[
        bool,
        typer.Option(
            "--guard/--no-guard",
            help="Schema modes: enforce numeric bounds and uniqueItems, which the grammar "
            "engines read past (--no-guard: the engine alone).",
        ),
    ] = True,
) -> None:
    """Decode every example greedily and record accuracy, latency, tokens/s and peak memory.

    Example: edgebench run --model smollm2-135m-instruct --limit 20 --threads 2

    Example: edgebench run --constraint none,gbnf,mask --limit 20

    Example: edgebench run --model smollm2-135m-instruct,smollm2-135m-instruct@onnx-int4
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
    )
    task_impl = get_task(settings.task)
    examples, dataset_info = load_examples(task_impl, settings)
    models = [model_under_test(spec) for spec in parse_model_list(settings.model)]
    result = execute(
        settings,
        models,
        task_impl,
        examples,
        dataset_info,
        progress=RichProgress(console),
    )
    out_console = Console()
    if not out_console.is_terminal:
        out_console = Console(width=160)  # piped: no terminal width to wrap at
    out_console.print(render_summary(result.summary))
    console.print(f"run folder: [bold]{result.run_dir}[/]")
