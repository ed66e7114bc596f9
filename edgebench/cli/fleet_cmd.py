"""`edgebench fleet run`: one plan on every host of an Ansible inventory, results back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.console import escape, stderr_console, stdout_console, stop_signals
from edgebench.cli.fleet_ingest import ingest_fleet, not_ingested
from edgebench.cli.options import default_threads, out_option

if TYPE_CHECKING:
    from rich.table import Table

    from edgebench.fleet.drive import HostResult

DEFAULT_OUT = Path("fleet-results")

fleet_app = typer.Typer(
    help="Many devices: run: one plan on every host of an Ansible inventory over SSH, each "
    "host's run folders fetched back.",
    no_args_is_help=True,
)


@fleet_app.command("run")
def fleet_run(
    plan: Annotated[Path, typer.Argument(metavar="PLAN.toml", help="The plan every host runs.")],
    inventory: Annotated[
        Path,
        typer.Option(
            "--inventory",
            "-i",
            metavar="HOSTS.ini",
            help="Ansible INI inventory: one host a line, e.g. "
            "'pi5-a ansible_host=192.168.1.20 ansible_user=pi'.",
        ),
    ],
    out: Annotated[
        Path | None,
        out_option(
            f"Folder of the fetched results, one folder per host (default: {DEFAULT_OUT}).",
            metavar="DIR",
        ),
    ] = None,
    push_models: Annotated[
        bool,
        typer.Option(
            "--push-models",
            help="Copy this machine's cached model files to the hosts instead of each host "
            "pulling them (hosts without internet); converted ONNX models (NAME@onnx-int4), "
            "which a host cannot make itself, are pushed whole.",
        ),
    ] = False,
    ingest: Annotated[
        Path | None,
        typer.Option(
            "--ingest",
            metavar="FILE",
            help="When the fleet ends, store every host's fetched run folders in this "
            "results database, as `edgebench db ingest` does (checked before any host).",
        ),
    ] = None,
) -> None:
    """Run PLAN.toml on every host of the inventory in parallel with Ansible: install
    edgebench there from this source (./install.sh, the host's own CPU flags), copy the
    plan and its datasets, make the models available, run `edgebench plan run` and fetch
    each host's plan folder into DIR/<host>/. A host that fails never stops the others;
    running the same command again resumes every unfinished host (finished cells are
    never rerun). --ingest FILE then stores what was fetched, whatever the hosts' states.
    Exit 0: every host complete (and nothing refused by --ingest); 1: some host failed
    (the table says why) or a folder was refused.

    Example: edgebench fleet run plan.toml --inventory hosts.ini --push-models --ingest results.db
    """
    from edgebench.db.schema import check_writable
    from edgebench.fleet.drive import find_playbook_command, run_fleet
    from edgebench.fleet.inventory import read_inventory
    from edgebench.fleet.status import COMPLETE
    from edgebench.plan.file import load_plan
    from edgebench.report.fit import Fitted

    hosts = read_inventory(inventory)
    find_playbook_command()  # no Ansible: say how to install it before anything else
    load_plan(plan, default_threads())  # a plan mistake is one line here, not one per host
    if ingest is not None:
        check_writable(ingest)  # an unusable database: one line now, not after the fleet
    destination = out or DEFAULT_OUT
    console = stderr_console()
    try:
        with stop_signals():
            results = run_fleet(
                plan,
                hosts,
                destination,
                push_models=push_models,
                say=lambda line: console.print(escape(line), highlight=False),
            )
    except KeyboardInterrupt:
        not_stored = not_ingested(ingest, destination) if ingest is not None else ""
        console.print(
            "[bold yellow]interrupted:[/] the hosts' plan runs stop with the connection; "
            f"run the same command again to resume{escape(not_stored)}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130) from None
    stdout_console().print(Fitted(results_table(results), 1))
    refused = ingest_fleet(ingest, results, destination) if ingest is not None else 0
    if refused or any(result.state.state != COMPLETE for result in results.values()):
        raise typer.Exit(1)


def results_table(results: dict[str, HostResult]) -> Table:
    """host | state | cells done | failed | results | why (one line per failed host)."""
    from rich.table import Table

    table = Table(title="edgebench fleet")
    for column in ("host", "state", "cells done", "cells failed", "results", "why"):
        table.add_column(column, justify="right" if column.startswith("cells") else "left")
    for host, result in results.items():
        cells = result.cells
        done = f"{cells.done}/{cells.total}" if cells.total is not None else str(cells.done)
        table.add_row(
            host,
            result.state.state,
            done,
            str(cells.failed),
            str(result.folder) if result.folder else "-",
            result.state.reason or "",
        )
    return table
