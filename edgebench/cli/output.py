"""How a run command loads, runs, shows its results and ends on Ctrl-C, SIGTERM or SIGHUP
(the consoles are in console.py, and named here too)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator

import typer
from rich.console import Console, Group
from rich.markup import escape

from edgebench.cli.console import say, stderr_console, stdout_console, stop_signals
from edgebench.cli.progress import RichProgress
from edgebench.runfolder.records import RunSettings, Summary
from edgebench.runner.engine import RunInterrupted, resume_command
from edgebench.runner.jobs import RunKind
from edgebench.runner.request import RunEnvironment
from edgebench.runner.start import start_run
from edgebench.tasks.base import Task


@contextlib.contextmanager
def interruptible(console: Console) -> Iterator[None]:
    """A run that stops cleanly on Ctrl-C, SIGTERM and SIGHUP: status `interrupted`,
    completed examples kept, lock released, cursor back, exit code 130."""
    try:
        with stop_signals():
            yield
    except RunInterrupted as stopped:
        kept = f"{stopped.n_samples} completed examples kept in {stopped.run_dir}"
        if stopped.resume is None:
            kept = f"nothing was written to {stopped.run_dir}; start the run again"
        else:
            kept += f"; continue with: {stopped.resume}"
        say(console, f"[bold yellow]interrupted:[/] {escape(kept)}")
        raise typer.Exit(130) from None
    except KeyboardInterrupt:  # loading the dataset or the model, rendering prompts
        say(
            console,
            "[bold yellow]interrupted:[/] before the run folder was made; nothing was written",
        )
        raise typer.Exit(130) from None


def _warn(console: Console, warning: str) -> None:
    console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)


# `--format md|csv` of a run's results: the text for a summary and a format.
Formatted = Callable[[Summary, str], str]


def show_summary(
    summary: Summary,
    render: Callable[[Summary], Group],
    as_json: bool,
    output_format: str = "table",
    formatted: Formatted | None = None,
) -> None:
    """A run's results on stdout: its tables, with --json (--format json) its
    summary.json record, with --format md or csv the text `formatted` makes."""
    if as_json or output_format == "json":
        typer.echo(json.dumps(summary.to_json(), indent=2))
    elif output_format != "table" and formatted is not None:
        typer.echo(formatted(summary, output_format), nl=False)  # the text exactly
    else:
        stdout_console().print(render(summary))


def run_and_show(
    settings: RunSettings,
    model_specs: list[str | None],
    task: Task,
    kind: RunKind,
    *,
    resume: bool,
    render: Callable[[Summary], Group],
    as_json: bool = False,
    device_name: str | None = None,
    output_format: str = "table",
    formatted: Formatted | None = None,
) -> None:
    """Start the run (runner/start.py: the dataset, the models, the engine) with a
    progress bar and its warnings on stderr, print the summary with `render`, and say
    where it went and what a crash or timeout cost.
    `device_name`: `--device-name`, checked (None: the environment's, or the hostname);
    `output_format`, `formatted`: see `show_summary`."""
    console = stderr_console()
    with interruptible(console):
        result = start_run(
            settings,
            model_specs,
            task,
            kind,
            resume=resume,
            device_name=device_name,
            environment=RunEnvironment(progress=RichProgress(console, pause_s=settings.delay)),
            warn=lambda warning: _warn(console, warning),
        )
    show_summary(result.summary, render, as_json, output_format, formatted)
    if result.worker_failures:
        console.print(
            f"[yellow]{result.worker_failures} example(s) lost to a worker crash or "
            f"timeout (recorded as such); `{escape(resume_command(kind.name, result.run_dir))}` "
            "runs them again[/]",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"run folder: [bold]{escape(str(result.run_dir))}[/]", soft_wrap=True)
