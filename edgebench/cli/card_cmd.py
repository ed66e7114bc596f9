"""`edgebench card` and `edgebench report`: a model card and an HTML page from run folders."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import out_option
from edgebench.cli.sources import DeviceOpt, is_db_path, run_sources
from edgebench.errors import UserError

if TYPE_CHECKING:
    from edgebench.summary import LoadedRun

RunDirArg = Annotated[
    Path,
    typer.Argument(
        help="A run folder written by `edgebench run`, a results database (.db) of `edgebench "
        "db ingest` with --run, or a JSON file of `edgebench bench` (a speed card)."
    ),
]


def _check_output(path: Path, suffixes: tuple[str, ...], option: str) -> None:
    if path.is_dir():
        raise UserError(
            f"{option} {path} is a folder; give a file name such as report{suffixes[0]}"
        )
    if path.suffix.lower() not in suffixes:
        raise UserError(f"{option} {path}: expected a {' or '.join(suffixes)} file name")
    if not path.parent.exists():
        raise UserError(f"{option} {path}: folder {path.parent} does not exist")
    if not path.parent.is_dir():
        raise UserError(f"{option} {path}: {path.parent} is not a folder")


def card(
    run_dir: RunDirArg,
    out: Annotated[
        Path | None,
        out_option("Card file to write (default: RUN_DIR/card.md)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            metavar="NAME",
            help="The model to describe, for a run of several.",
        ),
    ] = None,
    examples: Annotated[
        int,
        typer.Option(
            "--examples", metavar="N", min=0, help="Sample outputs shown in the card (0: none)."
        ),
    ] = 2,
    run_name: Annotated[
        str | None,
        typer.Option(
            "--run",
            metavar="RUN",
            help="With a .db: the run to describe (its folder name or run id).",
        ),
    ] = None,
    device: DeviceOpt = None,
    allow_contended: Annotated[
        bool,
        typer.Option(
            "--allow-contended",
            help="Publish speed in model-index also for modes whose timing other processes "
            "disturbed (or that predate contention measurement); the card says so.",
        ),
    ] = False,
) -> None:
    """Write a Hugging Face model card (model-index metadata, device, how it was run,
    accuracy, performance) and its plots next to it.

    Example: edgebench card runs/20261122T101500-smollm2-135m-instruct-edgejson --out card.md
    """
    from edgebench.report.bench_section import is_bench_file
    from edgebench.report.card import write_card

    if is_bench_file(run_dir) and not is_db_path(run_dir):
        _bench_card(run_dir, out, model)
        return
    with ExitStack() as stack:
        run, target = _card_source(run_dir, out, device, run_name, stack)
        _check_output(target, (".md",), "--out")
        files = write_card(run, target, model, examples, allow_contended)
    typer.echo(f"card: {files.card}")
    for plot in files.plots:
        typer.echo(f"plot: {plot}")


def _card_source(
    run_dir: Path, out: Path | None, device: str | None, run_name: str | None, stack: ExitStack
) -> tuple[LoadedRun, Path]:
    """The run a card describes and the card's file: a run folder (RUN_DIR/card.md by
    default), or the one run of a database that --run/--device select (--out needed: its
    folder is a temporary one)."""
    from edgebench.summary import load_run

    folders = run_sources([run_dir], stack, device, run_name)
    if not is_db_path(run_dir):
        return load_run(run_dir), out or run_dir / "card.md"
    if len(folders) > 1:
        names = ", ".join(folder.name for folder in folders[:5])
        more = ", ..." if len(folders) > 5 else ""
        raise UserError(
            f"{run_dir}: {len(folders)} runs match ({names}{more}); name one with --run RUN"
        )
    if out is None:
        raise UserError(f"{run_dir}: a results database; give the card's file with --out FILE")
    return load_run(folders[0]), out


def _bench_card(path: Path, out: Path | None, model: str | None) -> None:
    """`card` given a bench file: its speed table as a Markdown card."""
    from edgebench.io import write_text_atomic
    from edgebench.report.bench_section import bench_markdown, load_bench

    view = load_bench(path, model)
    target = out or path.with_suffix(".md")
    _check_output(target, (".md",), "--out")
    write_text_atomic(target, bench_markdown(view))
    typer.echo(f"card: {target}")


def report(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN_DIR",
            help="Run folders written by `edgebench run`, results databases (.db) of "
            "`edgebench db ingest`, and JSON files of `edgebench bench` (a speed table each).",
        ),
    ],
    out: Annotated[
        Path | None,
        out_option("The HTML page to write (one self-contained file; default: report.html)."),
    ] = None,
    html: Annotated[Path | None, typer.Option("--html", hidden=True)] = None,  # the old name
    title: Annotated[
        str | None, typer.Option("--title", metavar="TEXT", help="The page title.")
    ] = None,
    device: DeviceOpt = None,
) -> None:
    """Write one static HTML page for one or more runs: a sortable leaderboard, the
    plots and every example (prompt, raw output, parsed output, scores).

    Example: edgebench report runs/smollm2 runs/gemma --out report.html
    """
    from edgebench.io import write_text_atomic
    from edgebench.report.bench_section import (
        bench_page,
        is_bench_file,
        load_bench,
        with_bench_sections,
    )
    from edgebench.report.html import render_report
    from edgebench.summary import load_run

    if out is not None and html is not None and out != html:
        raise UserError(f"give the page once: --out {out} (--html is its old name)")
    target = out or html or Path("report.html")
    with ExitStack() as stack:
        sources = run_sources(run_dirs, stack, device, benches=True)
        benches = [load_bench(path) for path in sources if is_bench_file(path)]
        runs = [load_run(path) for path in sources if not is_bench_file(path)]
        _check_output(target, (".html", ".htm"), "--out")
        page = bench_page(benches, title) if not runs else render_report(runs, title)
    write_text_atomic(target, with_bench_sections(page, benches) if runs else page)
    path = target
    counts = [(len(runs), "run"), (len(benches), "bench file")]
    runs_text = ", ".join(f"{n} {what}" + ("s" * (n > 1)) for n, what in counts if n)
    typer.echo(f"report: {path} ({path.stat().st_size / 1024:.0f} KiB, {runs_text})")
