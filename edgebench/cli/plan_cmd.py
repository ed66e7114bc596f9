"""`edgebench plan run|show`: one plan file, the same matrix on every device."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.console import escape, say, stderr_console, stdout_console, stop_signals
from edgebench.cli.options import (
    DeviceNameOpt,
    JsonOpt,
    default_threads,
    out_option,
    parse_duration,
)
from edgebench.errors import RunFailure, UserError

if TYPE_CHECKING:
    from edgebench.plan.file import Plan

plan_app = typer.Typer(
    help="Benchmark plans: a plan.toml of models x quantizations x tasks x constraint modes "
    "x threads, run cell by cell on this device into one folder, resumable.",
    no_args_is_help=True,
)

PlanArg = Annotated[
    Path,
    typer.Argument(
        metavar="PLAN.toml",
        help="The plan file (dataset and model paths in it are relative to its folder).",
    ),
]
PlanOutOpt = Annotated[
    Path | None,
    out_option(
        "The plan folder: runs/<cell-id>/ per cell, bench/, logs/, plan-status.json "
        "(default: runs/<plan file name without .toml>).",
        metavar="DIR",
    ),
]


def _load(path: Path) -> Plan:
    """The checked plan; [bench] duration is read as `bench --duration` reads it."""
    from edgebench.plan.file import load_plan

    plan = load_plan(path, default_threads())
    duration = plan.bench.options.get("duration") if plan.bench is not None else None
    if duration is not None:
        try:
            parse_duration(duration, "bench.duration")
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    return plan


# Above this many cells `plan show` prints plain aligned lines: a drawn table of 10,000
# rows takes seconds to lay out, plain lines a fraction of one.
PLAIN_ROWS = 500


def _plain_table(title: str, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    widths = [max(len(column), *(len(str(row[column])) for row in rows)) for column in columns]
    lines = [title, "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += [
        "  ".join(str(r[c]).ljust(w) for c, w in zip(columns, widths, strict=True)) for r in rows
    ]
    typer.echo("\n".join(line.rstrip() for line in lines))


def _out(plan: Path, out: Path | None) -> Path:
    return out if out is not None else Path("runs") / plan.stem


@plan_app.command("run")
def run_plan(
    plan: PlanArg,
    out: PlanOutOpt = None,
    device_name: DeviceNameOpt = None,
) -> None:
    """Run every cell of the plan, each as its own `edgebench run` (or `bench`) process,
    into one folder. The same command again continues: done cells are skipped, a cell
    stopped half-way continues with `run --resume`, failed cells run again.

    Exit 0 when every cell is done, 1 when some failed (the others still ran), 130 on
    Ctrl-C (done cells kept).

    Example: edgebench plan run plan.toml --out results/pi5

    Example: edgebench plan run plan.toml --out results/pi5 --device-name pi5-shelf-1
    """
    from edgebench.failures import write_hint
    from edgebench.plan.execute import PlanInterrupted, PlanRun
    from edgebench.plan.state import STATUS_FILE
    from edgebench.system.identity import requested_name

    device_name = requested_name(device_name)  # a bad name: one line before any cell
    checked = _load(plan)
    root = _out(plan, out)
    console = stderr_console()

    def note(line: str) -> None:
        console.print(escape(line), highlight=False, soft_wrap=True)

    try:
        with stop_signals():  # SIGTERM and SIGHUP stop it as Ctrl-C does
            status = PlanRun(checked, root, device_name, say=note).run()
    except PlanInterrupted as stopped:
        counts = stopped.status.counts()
        say(
            console,
            f"[bold yellow]interrupted:[/] {counts['done']} done cells kept in "
            f"{escape(str(root))}; the same command continues",
        )
        raise typer.Exit(130) from None
    except OSError as exc:  # plan-status.json, the plan's copy, a log: a refused write
        # a full disk or quota, a file system remounted read-only, a failing disk
        raise RunFailure(
            f"{_refused(exc)}; the done cells are kept in {root}; {write_hint(exc)}, then the same "
            "command continues"
        ) from None
    counts = status.counts()
    summary = f"{counts['done']} of {len(status.cells)} cells done"
    if counts["failed"]:
        failed = [c.id for c in status.cells if c.status == "failed"]
        raise RunFailure(
            f"plan {plan}: {summary}, {counts['failed']} failed ({', '.join(failed)}); "
            f"why: {root / STATUS_FILE} and {root / 'logs'}; the same command tries them again"
        )
    console.print(f"plan: {escape(summary)} · {escape(str(root))}", soft_wrap=True)


@plan_app.command("show")
def show_plan(
    plan: PlanArg,
    out: Annotated[
        Path | None,
        out_option("A plan folder: show which cells are done there.", metavar="DIR"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The cells the plan expands to and where each writes (--json: the command each
    runs too); with --out, which are done, partial or still to run in that folder.

    Example: edgebench plan show plan.toml

    Example: edgebench plan show plan.toml --out results/pi5
    """
    from rich.table import Table

    from edgebench.plan.cells import expand
    from edgebench.plan.state import found
    from edgebench.report.fit import Fitted

    cells = expand(_load(plan))
    rows = []
    for cell in cells:
        state = found(cell, out) if out is not None else None
        rows.append(
            {
                "cell": cell.id,
                "kind": cell.kind,
                "state": state,
                "output": str(cell.output(Path("."))),
                "command": ["edgebench", *cell.args, *cell.coping],
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    columns = ("cell", "state", "output") if out is not None else ("cell", "output")
    if len(rows) > PLAIN_ROWS:
        _plain_table(f"plan {plan}: {len(cells)} cells", columns, rows)
    else:
        table = Table(title=f"plan {escape(str(plan))}: {len(cells)} cells")
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*(escape(str(row[c])) for c in columns))
        stdout_console().print(Fitted(table))
    if out is not None:
        states = [row["state"] for row in rows]
        stderr_console().print(
            f"{states.count('done')} done, {states.count('partial')} partial, "
            f"{states.count('new')} to run in {escape(str(out))}",
            highlight=False,
            soft_wrap=True,
        )


def _refused(exc: OSError) -> str:
    """A refused write in words: io's own line, else the file and the system's reason."""
    if isinstance(exc, UserError):  # io.WriteFailed: "FILE: cannot write (reason)"
        return str(exc)
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}cannot write ({exc.strerror or exc})"
