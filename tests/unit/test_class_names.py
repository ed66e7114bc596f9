"""No two classes of the package share a name, private ones and those nested in a function
included: a name says which thing it is wherever it is read (a traceback, a type hint, a
search), so the report's arm is `ArmView` beside the engine's `Arm`, the plan's model
`PlanModel` beside the registry's `ModelEntry`."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import edgebench

PACKAGE_ROOT = Path(edgebench.__file__).parent


def shared_class_names(root: Path) -> list[str]:
    """One line per class name defined more than once under `root`, naming every
    `file:line` that defines it: `Cell: plan/cells.py:25, report/cells.py:15`."""
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                defined[node.name].append(f"{where}:{node.lineno}")
    return [f"{name}: {', '.join(at)}" for name, at in sorted(defined.items()) if len(at) > 1]


def test_no_two_classes_share_a_name() -> None:
    assert shared_class_names(PACKAGE_ROOT) == []


def test_a_shared_name_is_caught_naming_both_files(tmp_path: Path) -> None:
    """The check itself, on a tiny package: a public name defined in two packages, and a
    private one, once inside a function."""
    files = {
        "__init__.py": "",
        "plan/__init__.py": "",
        "plan/cells.py": "class Cell:\n    pass\n\n\nclass _Draft:\n    pass\n",
        "report/__init__.py": "",
        "report/cells.py": "import os\n\n\nclass Cell(object):\n    pass\n",
        "report/draft.py": "def make():\n    class _Draft:\n        pass\n",
        "report/alone.py": "class Column:\n    pass\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert shared_class_names(tmp_path) == [
        "Cell: plan/cells.py:1, report/cells.py:4",
        "_Draft: plan/cells.py:5, report/draft.py:2",
    ]
