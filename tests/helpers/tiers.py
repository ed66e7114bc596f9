"""Which tier a test is in and when the slow tier runs (rules: tests/conftest.py docstring).

Pure functions of paths, so the rule is tested without starting pytest inside pytest."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
# every test in these folders is slow: real processes, a browser, the real model
SLOW_FOLDERS = (TESTS / "system", TESTS / "integration")
HINT = "`python -m pytest --all` runs every tier"
# the slow tests of tests/unit, by `file::function` (every parameter of it)
SLOW_LIST = TESTS / "slow_tests.txt"


def slow_unit_tests(listing: Path = SLOW_LIST) -> frozenset[str]:
    """The `file::function` ids SLOW_LIST names (relative to tests/unit; `#` comments)."""
    lines = (line.split("#", 1)[0].strip() for line in listing.read_text().splitlines())
    return frozenset(line for line in lines if line)


def unit_id(path: Path, name: str) -> str | None:
    """A unit test's `file::function` id as SLOW_LIST spells it (None outside tests/unit)."""
    unit = TESTS / "unit"
    if unit not in path.parents:
        return None
    return f"{path.relative_to(unit).as_posix()}::{name.split('[', 1)[0]}"


def named_paths(args: Iterable[str], invocation_dir: Path) -> list[Path]:
    """The paths the command line names, without a test id's `::name` part."""
    return [(invocation_dir / arg.split("::", 1)[0]).resolve() for arg in args]


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def slow_folder(path: Path) -> Path | None:
    """The slow folder `path` is in (or is), if any."""
    return next((folder for folder in SLOW_FOLDERS if _within(path, folder)), None)


def folder_named(folder: Path, named: list[Path]) -> bool:
    """Whether the command line names something inside this slow folder (or the folder)."""
    return any(_within(path, folder) for path in named)


def reaches(folder: Path, named: list[Path]) -> bool:
    """Whether collecting the named paths (all of `testpaths` when none) would walk into
    `folder`: only then is its absence worth a word."""
    return not named or any(_within(folder, path) for path in named)


def names_test(test_file: Path, named: list[Path]) -> bool:
    """Whether the command line asks for this slow test: its file (or one of its tests), or
    a path inside a slow folder that holds it. `tests` or `tests/unit` does not count."""
    return any(
        path == test_file or (_within(test_file, path) and slow_folder(path) is not None)
        for path in named
    )
