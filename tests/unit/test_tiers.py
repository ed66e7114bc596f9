"""The test tiers' rule (tests/conftest.py): what a command line's paths ask for."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.tiers import (
    TESTS,
    folder_named,
    named_paths,
    names_test,
    reaches,
    slow_folder,
)

ROOT = TESTS.parent
SYSTEM = TESTS / "system"
UNIT_FILE = TESTS / "unit" / "runner" / "test_engine.py"


def named(*args: str) -> list[Path]:
    return named_paths(args, ROOT)


def test_only_the_system_and_integration_folders_are_slow() -> None:
    assert slow_folder(SYSTEM / "test_faults.py") == SYSTEM
    assert slow_folder(TESTS / "integration") == TESTS / "integration"
    assert slow_folder(UNIT_FILE) is None
    assert slow_folder(TESTS) is None


def test_a_path_inside_a_slow_folder_names_it_and_a_wider_one_does_not() -> None:
    for args in (["tests/system"], ["tests/system/test_faults.py::test_x[a]"], ["tests/system/"]):
        assert folder_named(SYSTEM, named(*args)), args
    for args in ([], ["tests"], ["."], ["tests/unit"], ["tests/integration"]):
        assert not folder_named(SYSTEM, named(*args)), args


def test_a_slow_unit_test_runs_when_its_file_is_named_not_its_folder() -> None:
    assert names_test(UNIT_FILE, named("tests/unit/runner/test_engine.py"))
    assert names_test(UNIT_FILE, named("tests/unit/runner/test_engine.py::test_x"))
    for args in (["tests"], ["tests/unit"], ["tests/unit/runner"], ["tests/system"]):
        assert not names_test(UNIT_FILE, named(*args)), args


def test_a_slow_folders_test_runs_when_its_folder_or_file_is_named() -> None:
    test = SYSTEM / "test_faults.py"
    assert names_test(test, named("tests/system"))
    assert names_test(test, named("tests/system/test_faults.py::test_x"))
    assert not names_test(test, named("tests/system/test_hangup.py"))
    assert not names_test(test, named("tests"))


def test_paths_resolve_from_where_pytest_was_started() -> None:
    assert named_paths(["system/test_faults.py::t"], TESTS) == [SYSTEM / "test_faults.py"]


def test_a_left_out_folder_is_worth_a_word_only_when_the_run_would_have_walked_into_it() -> None:
    for args in ([], ["tests"], ["."]):
        assert reaches(SYSTEM, named(*args)), args
    for args in (["tests/unit"], ["tests/unit/test_io.py"]):
        assert not reaches(SYSTEM, named(*args)), args
