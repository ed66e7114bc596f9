"""`edgebench data`: generate the built-in datasets and validate datasets in the EdgeJSON or
DeepJSONEval format."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.choices import EDGEJSON_EXAMPLES_PER_SCHEMA, EDGEJSON_SEED
from edgebench.cli.console import escape
from edgebench.cli.options import JsonOpt, listing
from edgebench.errors import UserError
from edgebench.resources import resource_dir

if TYPE_CHECKING:
    from rich.console import Console

    from edgebench.datagen import edgejson

data_app = typer.Typer(
    help="Check datasets (EdgeJSON or DeepJSONEval format), generate the built-in datasets, "
    "convert a dataset's schemas to grammars.",
    no_args_is_help=True,
)
generate_app = typer.Typer(
    help="Generate a built-in dataset with the project's own seeded generator.",
    no_args_is_help=True,
)
data_app.add_typer(generate_app, name="generate")

_STYLE = {"pass": "green", "fail": "bold red", "not checked": "yellow"}  # by Status value
_PROBLEMS_SHOWN = 10


def _console() -> Console:
    from rich.console import Console

    return Console()


def _builtin_dir() -> Path:
    return resource_dir("data") / "edgejson"


@generate_app.command("edgejson")
def generate_edgejson(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Folder to write (default: the repo's data/edgejson).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Random seed.")] = EDGEJSON_SEED,
    examples_per_schema: Annotated[
        int, typer.Option("--examples-per-schema", help="Rows per schema type.")
    ] = EDGEJSON_EXAMPLES_PER_SCHEMA,
) -> None:
    """Write the EdgeJSON-style test split: test.jsonl, schemas/ and generation.json.

    The same seed always writes byte-identical files.

    Example: edgebench data generate edgejson --seed 7
    """
    from edgebench.datagen import edgejson

    console = _console()
    folder = out or _builtin_dir()
    manifest = edgejson.write_dataset(folder, seed=seed, examples_per_schema=examples_per_schema)
    levels = ", ".join(
        f"{level} {count}" for level, count in manifest["rows_per_complexity"].items()
    )
    console.print(
        f"wrote {manifest['rows']} rows ({levels}) of {manifest['schema_types']} schema types"
        f" to {folder} (seed {seed})",
        markup=False,
    )
    console.print(
        f"sha256 of {edgejson.DATASET_FILE}: {manifest['files'][edgejson.DATASET_FILE]['sha256']}"
    )


def _inputs(
    directory: Path | None, dataset: Path | None, schemas: Path | None
) -> tuple[Path, Path]:
    """The dataset file and schemas folder: explicit options win over DIR and the default."""
    from edgebench.datagen import edgejson

    folder = directory or (dataset.parent if dataset else _builtin_dir())
    if dataset is None:
        candidates = [folder / name for name in (edgejson.DATASET_FILE, "train.jsonl")]
        dataset = next((path for path in candidates if path.is_file()), None)
        if dataset is None:
            raise UserError(
                f"{folder}: no {edgejson.DATASET_FILE} or train.jsonl; pass --dataset FILE"
            )
    return dataset, schemas or folder / "schemas"


@generate_app.command("deepjson")
def generate_deepjson(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Folder to write (default: the repo's data/deepjson).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Random seed.")] = 5,
    per_depth: Annotated[
        int, typer.Option("--examples-per-depth", help="Examples per depth 3..7.")
    ] = 48,
) -> None:
    """Write the depth-stratified set (depth 3..7): test.jsonl and generation.json.

    Schemas come from the domains' property trees by the subtree construction of
    DeepJSONEval (Algorithm 1); texts state every value in prose, with distractors.
    The same seed always writes byte-identical files.

    Example: edgebench data generate deepjson --seed 5 --examples-per-depth 48
    """
    from edgebench.datagen.deepjson import generator

    console = _console()
    folder = out or resource_dir("data") / "deepjson"
    manifest = generator.write_dataset(folder, seed=seed, per_depth=per_depth)
    depths = ", ".join(f"depth {d} {n}" for d, n in manifest["rows_per_depth"].items())
    console.print(
        f"wrote {manifest['rows']} rows ({depths}) in {len(manifest['rows_per_domain'])} "
        f"domains to {folder} (seed {seed})",
        markup=False,
    )
    sha256 = manifest["files"][generator.DATASET_FILE]["sha256"]
    console.print(f"sha256 of {generator.DATASET_FILE}: {sha256}")


def _show(results: list[edgejson.CheckResult], title: str = "EdgeJSON dataset checks") -> None:
    from rich.table import Table

    console = _console()
    table = Table(title=title)
    table.add_column("check")
    table.add_column("result")
    table.add_column("details", overflow="fold")
    for result in results:
        style = _STYLE[result.status.value]
        table.add_row(result.name, f"[{style}]{result.status.value}[/]", escape(result.detail))
    console.print(table)
    for result in results:
        if not result.problems:
            continue
        console.print(f"[bold]{result.name}[/]: {len(result.problems)} problems")
        for problem in result.problems[:_PROBLEMS_SHOWN]:
            console.print(f"  {problem}", highlight=False, markup=False)
        if len(result.problems) > _PROBLEMS_SHOWN:
            console.print(f"  ... and {len(result.problems) - _PROBLEMS_SHOWN} more")


@data_app.command("validate")
def validate(
    directory: Annotated[
        Path | None,
        typer.Argument(help="Dataset folder with test.jsonl (or train.jsonl) and schemas/."),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset", metavar="FILE", help="The dataset file (.jsonl; deepjson also .xlsx)."
        ),
    ] = None,
    schemas: Annotated[
        Path | None,
        typer.Option("--schemas", metavar="DIR", help="Folder of schemas/<complexity>/<id>.json."),
    ] = None,
    task: Annotated[
        str,
        typer.Option(
            "--task", metavar="TASK", help=f"Dataset format: {listing(tuple(DATASET_FORMATS))}."
        ),
    ] = "edgejson",
    builtin: Annotated[
        bool,
        typer.Option(
            "--builtin",
            help="Also apply the built-in set's size rules (edgejson: 150 rows, 24 schema "
            "types; deepjson: 40 examples per depth 3-7, 5 domains).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check a dataset: read it as `edgebench run` does, then run every check.

    EdgeJSON: outputs valid against their schemas, string formats,
    duplicate prompts, complexity bounds, derived totals, prose prompts,
    values in the prompt, prompt length.
    DeepJSONEval (--task deepjson, .jsonl or .xlsx): depth equals the target,
    ground truth valid against its schema, every leaf value in the text,
    duplicate texts.

    The built-in set's size rules (rows and schema types; examples per depth
    and domains) apply only with --builtin, or without a folder or --dataset:
    then the built-in data/edgejson (or data/deepjson) is checked with them.

    Exit code 0 when every check passes, 1 when one fails, 2 on unreadable input.

    Example: edgebench data validate --dataset train.jsonl --schemas schemas

    Example: edgebench data validate --task deepjson --dataset my-deep.xlsx

    Example: edgebench data validate --builtin data/edgejson
    """
    from edgebench.datagen import edgejson

    console = _console()
    builtin = builtin or (directory is None and dataset is None)
    if task not in DATASET_FORMATS:
        raise UserError(
            f"unknown task '{task}' for data validate (known: {', '.join(DATASET_FORMATS)})"
        )
    checks, title = DATASET_FORMATS[task]
    results = checks(directory, dataset, schemas, builtin)
    if as_json:
        typer.echo(json.dumps([_result_json(result) for result in results], indent=2))
    else:
        _show(results, title)
    failed = sum(result.status is edgejson.Status.FAIL for result in results)
    if as_json:
        raise typer.Exit(code=1 if failed else 0)
    if failed:
        console.print(f"[bold red]{failed} of {len(results)} checks failed[/]")
        raise typer.Exit(code=1)
    skipped = sum(result.status is edgejson.Status.SKIP for result in results)
    note = f" ({skipped} not checked)" if skipped else ""
    console.print(f"[green]all {len(results) - skipped} checks passed{note}[/]")


def _edgejson_results(
    directory: Path | None, dataset: Path | None, schemas: Path | None, builtin: bool
) -> list[edgejson.CheckResult]:
    from edgebench.datagen import edgejson
    from edgebench.tasks.formats.edgejson import read_edgejson

    dataset_path, schemas_path = _inputs(directory, dataset, schemas)
    return edgejson.run_checks(read_edgejson(dataset_path, schemas_path), builtin=builtin)


def _result_json(result: edgejson.CheckResult) -> dict[str, Any]:
    return {
        "check": result.name,
        "status": result.status.value,
        "detail": result.detail,
        "problems": list(result.problems),
    }


def _deepjson_results(
    directory: Path | None, dataset: Path | None, schemas: Path | None, builtin: bool
) -> list[edgejson.CheckResult]:
    from edgebench.datagen.deepjson import checks
    from edgebench.tasks.formats.deepjson import read_deepjson

    if schemas is not None:
        raise UserError("--schemas does not apply to deepjson: every row has its own schema")
    folder = directory or resource_dir("data") / "deepjson"
    return checks.run_checks(read_deepjson(dataset or folder / "test.jsonl"), builtin=builtin)


@data_app.command("grammars")
def build_grammars(
    schemas: Annotated[
        Path | None,
        typer.Option(
            "--schemas", metavar="DIR", help="Folder of JSON Schemas (default: built-in EdgeJSON)."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Folder to write (default: the repo's grammars/schemas/edgejson).",
        ),
    ] = None,
) -> None:
    """Convert a dataset's JSON Schemas to GBNF with llama-cpp-python's converter, the
    grammars `--constraint gbnf` decodes with (others are converted and cached on first use).

    Example: edgebench data grammars
    """
    from edgebench.constraints import gbnf
    from edgebench.tasks.formats.edgejson import read_schema_folder

    console = _console()
    folder = out or gbnf.bundled_grammar_folder("edgejson")
    source = schemas or _builtin_dir() / "schemas"
    written = gbnf.write_schema_grammars(read_schema_folder(source), folder)
    console.print(
        f"wrote {len(written)} grammars ({gbnf.converter_version()}) to {folder}", markup=False
    )


# The dataset formats `data validate --task` checks: (checks, table title).
DATASET_FORMATS: dict[str, tuple[Callable[..., list[edgejson.CheckResult]], str]] = {
    "edgejson": (_edgejson_results, "EdgeJSON dataset checks"),
    "deepjson": (_deepjson_results, "DeepJSONEval dataset checks"),
}
