"""The layers of the package, enforced: an import may only go down the stack.

    0  __main__                             `python -m edgebench`
    1  cli                                  commands
    2  doctor                               `doctor`, `models check`
    3  bench, rescore                       `bench` and its sustained runs; `score`
    4  runner, report, db, plan, fleet      orchestration; rendering; results db; plans; hosts
    5  analysis                             what the views show, computed: arms, sweeps, devices
    6  summary                              summary.json from the records
    7  backends, prompts, datagen, metrics  runtimes, prompts, generators, metric families
    8  tasks, constraints, models           datasets, grammars, model files
    9  scoring                              pure per-sample scores
   10  runfolder, isolation                 the run-folder format; worker processes
   11  io, system                           atomic files; what the machine is
   12  record                               typed records that read, write and describe themselves
   13  readback, failures                   the bounded reader; what a failure is and says
   14  errors, resources, paths, environ,   leaves
       runtimes

A module may import its own package and any package of a higher number (lower layer);
never one of the same number (siblings stay independent) or a lower number. Imports
inside functions count too. `edgebench` itself (its __init__: the version) is a leaf.

Inside a package no module may come back to itself through its imports: the modules of
every package form a stack of their own (no loop between `system/device.py` and
`system/identity.py`, nor through a package's __init__). Every import counts, those
inside functions and under `if TYPE_CHECKING:` too: an import moved into a function to
dodge a loop still ties the two modules together, so a loop is broken by moving the
piece both need down into a module of its own, never by hiding an import.
"""

from __future__ import annotations

import ast
import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import edgebench

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("doctor",),
    ("bench", "rescore"),
    ("runner", "report", "db", "plan", "fleet"),
    ("analysis",),
    ("summary",),
    ("backends", "prompts", "datagen", "metrics"),
    ("tasks", "constraints", "models"),
    ("scoring",),
    ("runfolder", "isolation"),
    ("io", "system"),
    ("record",),
    ("readback", "failures"),
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
    report.write_text(report.read_text() + "\n\ndef late():\n    import edgebench.runner.engine\n")
    found = violations(copy)
    assert len(found) == 2, found
    assert found[0].startswith("report/table.py:")
    assert f"report (layer {RANK['report']}) imports runner" in found[0]
    assert found[1].startswith("scoring/parse.py:")
    assert f"scoring (layer {RANK['scoring']}) imports runner" in found[1]


def test_every_package_is_in_a_layer() -> None:
    packages = {p.name.removesuffix(".py") for p in PACKAGE_ROOT.iterdir()}
    packages -= {"__pycache__", "_bundled", "py.typed"}
    assert packages <= set(RANK), packages - set(RANK)


# -- no import loops ---------------------------------------------------------------------
def _module_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module under `root` (a package's __init__.py is the
    package: `edgebench.system`)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _targets(node: ast.AST, module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules an import statement loads by name: `from a.b import c` is
    the module a.b.c when there is one, else a.b; a relative import resolved first."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".")
            keep = len(package) - node.level + (path.name == "__init__.py")
            base = ".".join(package[:keep] + ([base] if base else []))
        names = [f"{base}.{alias.name}" for alias in node.names]
    else:
        return
    for name in names:
        while name and name not in modules:  # an attribute of a module: the module
            name = name.rpartition(".")[0]
        if name and name != module:
            yield name


def import_graph(root: Path) -> tuple[dict[str, dict[str, int]], dict[str, Path]]:
    """module -> {module it imports: line of the first such import}, over every import
    statement (at the top, inside functions, under TYPE_CHECKING)."""
    modules = _module_names(root)
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node, module, path, modules):
                graph[module].setdefault(target, node.lineno)  # type: ignore[attr-defined]
    return graph, modules


def _strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _loop_through(start: str, component: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """The shortest path of imports from `start` back to itself inside `component`."""
    inside = set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target not in inside or target in came_from:
                    continue
                came_from[target] = node
                if target == start:
                    path = [start]
                    while path[-1] != start or len(path) == 1:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                following.append(target)
        frontier = following
    raise AssertionError(f"{start} is in no loop of {component}")


def import_loops(root: Path) -> list[str]:
    """One line per set of modules that import each other (directly or round a longer
    loop): the loop through the first of them, each hop with the line of its import,
    `system/device.py:23 -> system/identity.py:36 -> system/device.py`."""
    graph, modules = import_graph(root)

    def where(module: str) -> str:
        return modules[module].relative_to(root).as_posix()

    lines = []
    for component in _strongly_connected(graph):
        path = _loop_through(component[0], component, graph)
        hops = [f"{where(a)}:{graph[a][b]}" for a, b in itertools.pairwise(path)]
        lines.append(" -> ".join([*hops, where(path[-1])]))
    return lines


def test_no_module_comes_back_to_itself_through_its_imports() -> None:
    assert import_loops(PACKAGE_ROOT) == []


def _fake_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "edgebench"
    for name, text in {"__init__.py": "", **files}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    return package


def test_a_loop_between_two_sibling_modules_is_caught(tmp_path: Path) -> None:
    """The check itself, on a tiny package: two modules of one package importing each
    other, one of the imports hidden inside a function, are reported naming both."""
    package = _fake_package(
        tmp_path,
        {
            "system/__init__.py": "",
            "system/reader.py": "import os\n\nfrom edgebench.system.facts import X\n",
            "system/facts.py": "X = 1\n\n\ndef late():\n    from edgebench.system import reader\n",
            "system/alone.py": "from edgebench.system.facts import X\n",
        },
    )
    assert import_loops(package) == ["system/facts.py:5 -> system/reader.py:3 -> system/facts.py"]


def test_a_longer_loop_and_one_through_an_init_are_caught(tmp_path: Path) -> None:
    package = _fake_package(
        tmp_path,
        {
            "a/__init__.py": "from edgebench.a.one import ONE\n",
            "a/one.py": "from edgebench.a import TWO\nONE = 1\n",
            "b/__init__.py": "",
            "b/x.py": "from edgebench.b.y import Y\n",
            "b/y.py": "from edgebench.b import z\nY = 1\n",
            "b/z.py": "from .x import X\n",
        },
    )
    assert import_loops(package) == [
        "a/__init__.py:1 -> a/one.py:1 -> a/__init__.py",
        "b/x.py:1 -> b/y.py:1 -> b/z.py:1 -> b/x.py",
    ]


def test_the_system_loop_is_caught_if_it_comes_back(tmp_path: Path) -> None:
    """The loop this rule was written for, on a copy of the real package: the identity
    reaching for the device block's reader again, from inside a function."""
    copy = tmp_path / "edgebench"
    shutil.copytree(PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    identity = copy / "system" / "identity.py"
    identity.write_text(
        identity.read_text() + "\n\ndef late():\n    from edgebench.system.device import ROOT\n"
    )
    (found,) = import_loops(copy)
    assert found.startswith("system/device.py:") and "-> system/identity.py:" in found, found
    assert found.endswith("-> system/device.py"), found
