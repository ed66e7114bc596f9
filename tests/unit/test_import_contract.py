"""The layers of the package, enforced: an import may only go down the stack.

    0  __main__                             `python -m edgebench`
    1  cli                                  commands
    2  runner, report, db, plan, fleet      orchestration; rendering; results db; plans; hosts
    3  summary                              summary.json from the records
    4  backends, prompts, datagen, metrics  runtimes, prompts, generators, metric families
    5  tasks, constraints, models           datasets, grammars, model files
    6  scoring                              pure per-sample scores
    7  runfolder, isolation                 the run-folder format; worker processes
    8  io, system                           atomic files; what the machine is
    9  readback                             the bounded reader of every file read back
   10  errors, resources, paths, environ,   leaves
       runtimes

A module may import its own package and any package of a higher number (lower layer);
never one of the same number (siblings stay independent) or a lower number. Imports
inside functions count too. `edgebench` itself (its __init__: the version) is a leaf.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import edgebench

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("runner", "report", "db", "plan", "fleet"),
    ("summary",),
    ("backends", "prompts", "datagen", "metrics"),
    ("tasks", "constraints", "models"),
    ("scoring",),
    ("runfolder", "isolation"),
    ("io", "system"),
    ("readback",),
    ("errors", "resources", "paths", "environ", "runtimes", "__init__"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
PACKAGE_ROOT = Path(edgebench.__file__).parent


def _top(module: str) -> str:
    """`edgebench.runner.engine` -> `runner`; `edgebench` -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imported(node: ast.AST, root: Path) -> list[str]:
    """The edgebench packages an import statement reaches."""
    if isinstance(node, ast.Import):
        return [_top(a.name) for a in node.names if a.name.split(".")[0] == "edgebench"]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == "edgebench":  # from edgebench import __version__ / a package
            names = [a.name for a in node.names]
            return [n if n in RANK and n != "__init__" else "__init__" for n in names]
        if node.module.split(".")[0] == "edgebench":
            return [_top(node.module)]
    return []


def violations(root: Path) -> list[str]:
    """Every import in the package under `root` that goes the wrong way, or from or to
    a package no layer names."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        source = relative.parts[0].removesuffix(".py")
        if source not in RANK:
            found.append(f"{relative}: package '{source}' is in no layer")
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _imported(node, root):
                if target == source:
                    continue
                if target not in RANK:
                    found.append(f"{relative}:{node.lineno}: imports '{target}', in no layer")
                elif RANK[target] <= RANK[source]:
                    found.append(
                        f"{relative}:{node.lineno}: {source} (layer {RANK[source]}) imports "
                        f"{target} (layer {RANK[target]})"
                    )
    return found


def test_every_import_goes_down_the_stack() -> None:
    assert violations(PACKAGE_ROOT) == []


def test_a_wrong_way_import_is_caught(tmp_path: Path) -> None:
    """The check itself: the real package with one import added that goes up the stack
    (pure scoring reaching for the run engine), and one between siblings."""
    copy = tmp_path / "edgebench"
    shutil.copytree(PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    parse = copy / "scoring" / "parse.py"
    parse.write_text(parse.read_text() + "\nfrom edgebench.runner.engine import execute\n")
    report = copy / "report" / "table.py"
    report.write_text(report.read_text() + "\n\ndef late():\n    import edgebench.runner.bench\n")
    found = violations(copy)
    assert len(found) == 2, found
    assert found[0].startswith("report/table.py:") and "report (layer 2) imports runner" in found[0]
    assert (
        found[1].startswith("scoring/parse.py:") and "scoring (layer 6) imports runner" in found[1]
    )


def test_every_package_is_in_a_layer() -> None:
    packages = {p.name.removesuffix(".py") for p in PACKAGE_ROOT.iterdir()}
    packages -= {"__pycache__", "_bundled", "py.typed"}
    assert packages <= set(RANK), packages - set(RANK)
