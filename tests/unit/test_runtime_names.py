"""Runtimes describe themselves (edgebench/runtimes.py): outside a backend's own modules
(backends/), the model files' (models/) and the declarations, no module names a runtime,
one of its backends, its package or its version key as a string. The few that must, for
a reason of their own, are listed here with it; docs/contributing/extending.md's "Add a
backend" list stays short only while this holds."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import edgebench
from edgebench.runtimes import RUNTIMES

PACKAGE_ROOT = Path(edgebench.__file__).parent
# Where runtime names belong: each backend's modules, the model files, the declarations.
HOMES = ("backends/", "models/", "runtimes.py")
# file -> (the names it may hold, why)
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "cli/choices.py": (
        frozenset({"onnx", "openvino"}),
        "the `models convert --to` targets copied for --help, held by tests/unit/cli",
    ),
    "runner/prepare.py": (frozenset({"onnx"}), "the `onnx` block of the model record"),
    "system/build_flags.py": (
        frozenset({"llama_cpp", "llama-cpp-python"}),
        "install.sh's stamp on the llama.cpp build it compiled",
    ),
}


def runtime_words() -> frozenset[str]:
    """Every string that names a runtime: its name, backends, package and version key."""
    words: set[str] = {"llama_cpp"}  # llama-cpp-python's import name
    for runtime in RUNTIMES.values():
        words |= {runtime.name, *runtime.backends}
        words |= {w for w in (runtime.package, runtime.version_key) if w}
    return frozenset(words)


def named_outside_homes(root: Path) -> list[str]:
    """`file:line: 'name'` for each runtime name a string literal holds outside HOMES and
    ALLOWED (f-strings' literal parts too)."""
    words = runtime_words()
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(HOMES):
            continue
        allowed = ALLOWED.get(relative, (frozenset(), ""))[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in words - allowed:
                found.append(f"{relative}:{node.lineno}: {node.value!r}")
    return found


def test_no_module_outside_the_backends_names_a_runtime() -> None:
    assert named_outside_homes(PACKAGE_ROOT) == [], (
        "read the runtime's declaration in edgebench/runtimes.py instead"
    )


def test_every_allowed_name_is_still_there() -> None:
    """An exception no longer needed is removed, so the list stays the truth."""
    for relative, (names, _why) in ALLOWED.items():
        tree = ast.parse((PACKAGE_ROOT / relative).read_text(encoding="utf-8"))
        held = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        assert names <= held, (relative, names - held)


def test_a_new_name_check_is_caught(tmp_path: Path) -> None:
    """The check itself: a report module that asks for a runtime by name."""
    copy = tmp_path / "edgebench"
    shutil.copytree(PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    table = copy / "report" / "table.py"
    table.write_text(table.read_text() + '\n\ndef late(backend):\n    return backend == "onnx"\n')
    found = named_outside_homes(copy)
    assert len(found) == 1 and found[0].startswith("report/table.py:"), found
    assert found[0].endswith(": 'onnx'")
