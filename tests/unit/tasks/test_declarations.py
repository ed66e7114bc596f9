"""Each task's `TaskInfo` (tasks/__init__.py) is the truth about it: the class it names
is that task, its published scorer exists, and the defaults copied where the registry
cannot be imported agree with it."""

from __future__ import annotations

import pytest

from edgebench.errors import UserError
from edgebench.runfolder.records import RunSettings
from edgebench.scoring.extract import REFERENCES
from edgebench.tasks import DEFAULT_TASK, TASKS, get_task, task_info


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_declaration_names_its_task(name: str) -> None:
    info = TASKS[name]
    assert get_task(name).name == name
    assert info.reference is None or info.reference in REFERENCES
    assert set(info.table_groups) <= set(info.groups)
    assert set(info.row_order) <= set(info.groups)


def test_the_run_settings_default_task_is_the_registry_default() -> None:
    assert RunSettings.task == DEFAULT_TASK in TASKS  # runfolder/ sits below tasks/


def test_an_unknown_task_is_one_line() -> None:
    with pytest.raises(UserError, match=r"^unknown task 'nope' \(known: deepjson, edgejson, "):
        task_info("nope")
