"""The fake runs of two devices every db test reads (made once per module: the runs are
never changed in place; a test that edits runs copies them first)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.db_runs import make_fleet_runs
from tests.helpers.inline_prompts import chat_templates_in_process


@pytest.fixture(scope="session")
def fleet_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fleet/<device>/<quant>: four completed run folders of two devices."""
    root = tmp_path_factory.mktemp("db-runs") / "fleet"
    with chat_templates_in_process():
        make_fleet_runs(root)
    return root


@pytest.fixture
def fleet(fleet_root: Path, tmp_path: Path) -> Path:
    """A copy of the fleet's runs that a test may change."""
    return Path(shutil.copytree(fleet_root, tmp_path / "fleet"))
