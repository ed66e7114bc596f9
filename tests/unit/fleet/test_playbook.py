"""The shipped playbook and the status lines agree: every step status.py prints a line for
is a task of the playbook, the play never stops the fleet for one host, and nothing runs
in the background on a host."""

from __future__ import annotations

from typing import Any

import pytest

from edgebench.fleet.drive import PLAYBOOK, playbook_env
from edgebench.fleet.status import RUN_STEP, STEPS

yaml = pytest.importorskip("yaml")


def tasks(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for task in items:
        found.append(task)
        for key in ("block", "rescue", "always"):
            found += tasks(task.get(key, []))
    return found


def test_every_step_is_a_task_and_no_host_stops_the_others() -> None:
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    assert play["strategy"] == "free"
    assert "any_errors_fatal" not in play and "max_fail_percentage" not in play
    all_tasks = tasks(play["tasks"])
    names = {task["name"] for task in all_tasks}
    assert set(STEPS) <= names
    assert not [task for task in all_tasks if "async" in task or "poll" in task]
    (run,) = [task for task in all_tasks if task["name"] == RUN_STEP]
    assert "remote_run.py" in run["ansible.builtin.command"]["argv"][1]


def test_ansible_reports_through_the_edgebench_callback() -> None:
    env = playbook_env({"PATH": "/bin", "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3"})
    assert env["ANSIBLE_STDOUT_CALLBACK"] == "edgebench_status"
    assert env["ANSIBLE_CALLBACK_PLUGINS"].endswith("fleet/callback")
    assert env["ANSIBLE_PYTHON_INTERPRETER"] == "/usr/bin/python3"  # the user's own wins
    assert env["PATH"] == "/bin"
