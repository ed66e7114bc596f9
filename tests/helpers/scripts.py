"""Loading a repository script (benchmarks/, scripts/) as a module, for the tests of its
own logic: they are files, not packages, so `import` cannot reach them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(relative: str) -> ModuleType:
    """The script at `relative` (to the repository root), imported under its file stem.
    Registered in sys.modules before it runs: its dataclasses look their module up."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
