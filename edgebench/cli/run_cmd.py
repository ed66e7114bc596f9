"""`edgebench run`: benchmark one model on one task and print the summary."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from edgebench.cli.app import app, stdout_console
from edgebench.cli.options import (
    DatasetOpt,
    LimitOpt,
    MaxContextOpt,
    MaxTokensOpt,
    MetricParamOpt,
    MetricsOpt,
    ModelOpt,
    NCtxOpt,
    OutOpt,
    SchemasOpt,
    ThreadsOpt,
    default_threads,
)
from edgebench.constraints import parse_modes
from edgebench.errors import UserError
from edgebench.metrics import parse_metric_params, parse_metrics, select_families
from edgebench.report.table import RichProgress, render_summary
from edgebench.runfolder.read import read_manifest
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.resume import settings_from_manifest
from edgebench.runner.run import RunInterrupted, RunSettings, execute
from edgebench.runner.spec import DEFAULT_MAX_CRASHES
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
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            help="Task: edgejson (extraction), deepjson (nested extraction, accuracy by "
            "depth) or roundtrip (default: edgejson).",
        ),
    ] = None,
    dataset: DatasetOpt = None,
    schemas: SchemasOpt = None,
    limit: LimitOpt = None,
    threads: ThreadsOpt = None,
    max_tokens: MaxTokensOpt = None,
    n_ctx: NCtxOpt = None,
    max_context: MaxContextOpt = None,
    out: OutOpt = None,
    constraint: Annotated[
        str | None,
        typer.Option(
            "--constraint",
            "-c",
            help="Constraint modes, comma-separated, each run on the same examples: "
            "none, json, gbnf, outlines, mask (default: none).",
        ),
    ] = None,
    warmup: Annotated[
        bool | None,
        typer.Option("--warmup/--no-warmup", help="One untimed generation first (default: on)."),
    ] = None,
    guard: Annotated[
        bool | None,
        typer.Option(
            "--guard/--no-guard",
            help="Schema modes: enforce numeric bounds and uniqueItems, which the grammar "
            "engines read past (--no-guard: the engine alone; default: on).",
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Continue the unfinished run in this folder with its stored settings: "
            "complete examples are kept, the missing ones and those a worker crash or "
            "timeout lost are run. Refused if the model, dataset or settings differ.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds of wall clock one example may take; past it the worker is "
            "killed, the example recorded as a timeout and a fresh worker goes on "
            "(default: no limit).",
        ),
    ] = None,
    max_crashes: Annotated[
        int | None,
        typer.Option(
            "--max-crashes",
            min=1,
            help="Give up on a constraint mode after this many examples in a row lost to "
            f"a worker crash or timeout (default: {DEFAULT_MAX_CRASHES}).",
        ),
    ] = None,
    ignore_memory_check: Annotated[
        bool,
        typer.Option(
            "--ignore-memory-check",
            help="Load the model even when the model file plus its KV cache exceeds "
            "the memory available.",
        ),
    ] = False,
    metrics: MetricsOpt = None,
    metric_param: MetricParamOpt = None,
) -> None:
    """Decode every example greedily and record accuracy, latency, tokens/s and peak memory.

    Example: edgebench run --model smollm2-135m-instruct --limit 20 --threads 2

    Example: edgebench run --constraint none,gbnf,mask --limit 20 --timeout 120

    Example: edgebench run --model smollm2-135m-instruct,smollm2-135m-instruct@onnx-int4

    Example: edgebench run --task roundtrip --limit 20 --metrics sted,sobench

    Example: edgebench run --task deepjson --dataset deepjsoneval.jsonl --max-context 4096

    Example: edgebench run --resume runs/20261122T002458-smollm2-135m-instruct-edgejson
    """
    console = Console(stderr=True)
    given: dict[str, Any] = {
        "model": model,
        "task": task,
        "dataset": dataset,
        "schemas": schemas,
        "limit": limit,
        "threads": threads,
        "max_tokens": max_tokens,
        "n_ctx": n_ctx,
        "max_context": max_context,
        "out": out,
        "warmup": warmup,
        "constraints": tuple(parse_modes(constraint)) if constraint is not None else None,
        "guard": guard,
        "timeout": timeout,
        "max_crashes": max_crashes,
        "check_memory": False if ignore_memory_check else None,
        "metrics": parse_metrics(metrics) if metrics is not None else None,
        "metric_params": parse_metric_params(metric_param) if metric_param else None,
    }
    given = {name: value for name, value in given.items() if value is not None}
    if resume is not None:
        if out is not None and out.resolve() != resume.resolve():
            raise UserError("give the run folder once: --resume DIR (not --out as well)")
        settings = settings_from_manifest(read_manifest(resume), resume, given)
    else:
        settings = RunSettings(**{"threads": default_threads(), **given})
    task_impl = get_task(settings.task)
    select_families(task_impl, settings.metrics, settings.metric_params)  # errors first
    examples, dataset_info = load_examples(task_impl, settings)
    models = [model_under_test(spec) for spec in parse_model_list(settings.model)]
    try:
        with _sigterm_as_interrupt():
            result = execute(
                settings,
                models,
                task_impl,
                examples,
                dataset_info,
                progress=RichProgress(console),
                resume=resume is not None,
            )
    except RunInterrupted as stopped:
        console.print(
            f"[bold yellow]interrupted:[/] {stopped.n_samples} completed examples kept in "
            f"{stopped.run_dir}; continue with: edgebench run --resume {stopped.run_dir}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    out_console = stdout_console()
    out_console.print(render_summary(result.summary))
    if result.worker_failures:
        console.print(
            f"[yellow]{result.worker_failures} example(s) lost to a worker crash or "
            f"timeout (recorded as such); `edgebench run --resume {result.run_dir}` "
            "runs them again[/]",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"run folder: [bold]{result.run_dir}[/]")


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """`kill` and service managers send SIGTERM: stop as cleanly as on Ctrl-C (status
    `interrupted`, samples kept) instead of leaving the manifest saying `running`."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
