"""The `edgebench` command: a thin layer that parses options and calls the library.

Every command is registered here, in the order `--help` lists them: the workflow first
(models pull -> run -> compare -> card -> report), then the rest. Errors end a command
with one line and an exit code by kind (errors.py): a usage mistake 2, a run that could
not finish (a crashed model, a full disk) 1, Ctrl-C 130; never a traceback.
"""

from __future__ import annotations

import contextlib
import sys

import typer

from edgebench.cli import (
    bench_cmd,
    card_cmd,
    compare_cmd,
    consistency_cmd,
    data_cmd,
    db_cmd,
    doctor_cmd,
    fidelity_cmd,
    fleet_cmd,
    models_cmd,
    plan_cmd,
    recommend_cmd,
    run_cmd,
    score_cmd,
)
from edgebench.cli.command_tree import (
    Abort,
    ClickException,
    Interrupted,
    NoArgsIsHelpError,
    build,
    interrupts_reported,
    usage_error_line,
)
from edgebench.cli.console import escape, stderr_console
from edgebench.cli.version import version_line
from edgebench.errors import RunFailure, UserError
from edgebench.failures import classify, is_disk_fault

app = typer.Typer(
    name="edgebench",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(models_cmd.models_app, name="models")
app.command()(run_cmd.run)
app.command()(compare_cmd.compare)
app.command()(card_cmd.card)
app.command()(card_cmd.report)
app.command()(recommend_cmd.recommend)
app.command()(doctor_cmd.doctor)
app.command()(consistency_cmd.consistency)
app.command()(score_cmd.score)
app.command()(fidelity_cmd.fidelity)
app.command()(bench_cmd.bench)
app.add_typer(data_cmd.data_app, name="data")
app.add_typer(db_cmd.db_app, name="db")
app.add_typer(plan_cmd.plan_app, name="plan")
app.add_typer(fleet_cmd.fleet_app, name="fleet")
# The order `edgebench --help` lists them in: the workflow, then the rest.
WORKFLOW = ("models", "run", "compare", "card", "report")


def _show_version(value: bool) -> None:
    if value:
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Benchmark small language models on structured JSON extraction, on this device.

    Start here: edgebench models pull smollm2-135m-instruct, then
    edgebench run --limit 20 --constraint none,mask --out runs/first, then
    edgebench compare runs/first, edgebench card runs/first and
    edgebench report runs/first --out report.html.
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point: errors become one red line and an exit code by kind, never a
    traceback; click's usage errors (an unknown option, a value out of range) too. Ctrl-C
    that no command turned into its own line (click's Abort, or before click runs) is
    `interrupted` and 130; a full disk no command reported is one line and 1."""
    try:
        with interrupts_reported():
            tree = build(app, WORKFLOW)
            code = tree.main(args=argv, prog_name="edgebench", standalone_mode=False)
    except NoArgsIsHelpError as exc:
        typer.echo(exc.format_message())  # no command given: the help, as Typer shows it
        code = 0
    except ClickException as exc:
        _error_line(usage_error_line(exc), exc.exit_code)
    except (UserError, RunFailure) as exc:
        _error_line(str(exc), exc.exit_code)
    except (Abort, Interrupted, KeyboardInterrupt):
        interrupted_line()
        code = 130
    except OSError as exc:
        failure = classify(exc)
        if failure is None or not is_disk_fault(exc):
            raise  # a bug's traceback, not a disk's
        line = f"{failure.line}; {failure.hint}, then run the command again"
        _error_line(line, failure.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def interrupted_line() -> None:
    """The line a Ctrl-C ends a command with when the command said nothing itself."""
    with contextlib.suppress(OSError):  # a terminal gone (SIGHUP) cannot take it
        stderr_console().print(
            "[bold yellow]interrupted:[/] the command was stopped", highlight=False
        )


def _error_line(message: str, exit_code: int) -> None:
    # The message is text, not markup: "pip install 'edgebench[convert]'" keeps its brackets.
    stderr_console().print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True
    )
    sys.exit(exit_code)
