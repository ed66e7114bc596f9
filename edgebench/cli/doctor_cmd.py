"""`edgebench doctor`: this device, what the llama.cpp build uses of it, and a speed probe."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.choices import PROBE_SECONDS
from edgebench.cli.console import stderr_console, stop_signals
from edgebench.cli.options import JsonOpt, ModelOpt, ThreadsOpt, default_threads


def doctor(
    model: ModelOpt = None,
    threads: ThreadsOpt = None,
    probe: Annotated[
        bool,
        typer.Option(
            "--probe/--no-probe",
            help=f"Measure tg64 of the model for about {PROBE_SECONDS:g} s in a worker "
            "(--no-probe: the device and build facts only). A model not in the cache is "
            "not pulled.",
        ),
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """Check this device before a run: CPU model and features, which of them the
    installed llama.cpp build uses (and how to rebuild it for the rest), the optional
    runtimes' versions and CPU plugin (or how to install them), governor,
    temperature and throttling, free memory, and a short speed probe.

    The same facts are in every run's manifest.json (device block).

    Example: edgebench doctor --no-probe --json
    """
    from edgebench.doctor.diagnose import diagnose
    from edgebench.report.doctor import doctor_text

    console = stderr_console()
    with stop_signals():  # SIGTERM and SIGHUP stop the probe's worker as Ctrl-C does
        report = diagnose(
            threads or default_threads(),
            model=model,
            probe=probe,
            announce=lambda line: console.print(line, markup=False, highlight=False),
        )
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        typer.echo(
            doctor_text(report.device, report.build_error, report.probe, report.runtimes), nl=False
        )
