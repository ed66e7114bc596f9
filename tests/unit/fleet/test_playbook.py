"""The shipped playbook and the status lines agree: every step status.py prints a line for
is a task of the playbook, the play never stops the fleet for one host, and nothing runs
in the background on a host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgebench.fleet.drive import PLAYBOOK, close_connections, playbook_env
from edgebench.fleet.status import RUN_STEP, STEPS, parse_event

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


def test_a_run_keeps_its_ssh_connections_in_its_own_folder_and_closes_them(
    tmp_path: Path,
) -> None:
    control = tmp_path / "ssh"
    control.mkdir()
    env = playbook_env({"PATH": "/bin"}, control)
    assert env["ANSIBLE_SSH_CONTROL_PATH_DIR"] == str(control)
    (control / "stale-socket").write_text("")  # not a live master: ssh -O exit just fails
    close_connections(control)
    assert not control.exists()
    close_connections(control)  # nothing left to close: no error


def test_onnx_models_install_the_onnx_extra_and_mark_it_installed() -> None:
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    by_name = {task["name"]: task for task in tasks(play["tasks"])}
    install = by_name["install edgebench"]["ansible.builtin.command"]["cmd"]
    assert install == "./install.sh {{ fleet_install_extras | default('') }}"
    # The installed mark names the extras too: a host installed without onnx installs again.
    assert "fleet_install_extras" in play["vars"]["install_id"]
    assert by_name["installed source"]["ansible.builtin.stat"]["path"].endswith("{{ install_id }}")
    assert "{{ install_id }}" in by_name["mark the source installed"]["ansible.builtin.shell"]


# Inventory variables (and what the play derives from them) a shell must never read as code.
INVENTORY_VARIABLES = (
    "edgebench_root",
    "edgebench_python",
    "edgebench_env",
    "edgebench_venv_site_packages",
    "root_setting",
    "host_python",
    "host_env",
    "site_packages",
    "root",
    "inventory_hostname",
)


def test_no_shell_task_reads_an_inventory_variable_as_shell_text() -> None:
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    for task in tasks(play["tasks"]):
        shell = task.get("ansible.builtin.shell") or task.get("shell")
        if shell is None:
            continue
        text = shell if isinstance(shell, str) else shell.get("cmd", "")
        for variable in INVENTORY_VARIABLES:
            assert f"{{{{ {variable}" not in text, (task["name"], variable)


def connect_argv() -> list[str]:
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    (connect,) = [task for task in tasks(play["tasks"]) if task["name"] == "connect"]
    argv = connect["ansible.builtin.command"]["argv"]
    assert argv[-1] == "{{ root_setting }}"
    return argv[:-1]


@pytest.mark.parametrize(
    ("root", "made"),
    [
        ("x; touch pwned", "x; touch pwned"),
        ("$(touch pwned)", "$(touch pwned)"),
        ("`touch pwned`", "`touch pwned`"),
        ("a b && touch pwned", "a b && touch pwned"),
        ("-n", "-n"),
        ("~/edgebench", "home/edgebench"),
        ("~", "home"),
    ],
)
def test_edgebench_root_reaches_the_host_as_a_folder_name_never_as_shell(
    tmp_path: Path, root: str, made: str
) -> None:
    import subprocess

    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [*connect_argv(), root],
        cwd=tmp_path,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == str(tmp_path / made)
    assert (tmp_path / made).is_dir()
    assert not (tmp_path / "pwned").exists() and not (home / "pwned").exists()


# An inventory value per host, and whether the play's first check lets the host go on.
HOSTILE_VALUES = {
    "good": ({"edgebench_root": "~/eb", "edgebench_venv_site_packages": ["/opt/pkgs"]}, True),
    "defaults": ({}, True),
    "root with a line break": ({"edgebench_root": "x\n/tmp/elsewhere"}, False),
    "root with a carriage return": ({"edgebench_root": "x\r/tmp/elsewhere"}, False),
    "root with an escape": ({"edgebench_root": "x\x1b]0;t\x07"}, False),
    "pth import line": ({"edgebench_venv_site_packages": ["import os; os.system('id')"]}, False),
    "pth line break": ({"edgebench_venv_site_packages": ["/opt/a\nimport os"]}, False),
    "pth relative": ({"edgebench_venv_site_packages": ["pkgs"]}, False),
    "pth a string": ({"edgebench_venv_site_packages": "/opt/pkgs"}, False),
}


def test_inventory_values_that_would_change_the_folder_or_run_code_fail_the_host(
    tmp_path: Path,
) -> None:
    """The shipped playbook's `inventory values` check, run by Ansible on local hosts:
    before it, `x\\n/tmp/elsewhere` as edgebench_root made the play work in
    /tmp/elsewhere (the last line `connect` printed), and a site-packages entry became a
    .pth line that Python runs at every start of the host's venv."""
    import json
    import os
    import shutil
    import subprocess

    ansible = shutil.which("ansible-playbook")
    if ansible is None:
        pytest.skip("ansible-playbook is not installed")
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    (check,) = [task for task in play["tasks"] if task["name"] == "inventory values"]
    assert play["tasks"][0] is check  # before anything is made on the host
    mini = [{"hosts": "all", "gather_facts": False, "vars": play["vars"], "tasks": [check]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(mini))
    names = {f"h{i}": case for i, case in enumerate(HOSTILE_VALUES)}
    hosts = {
        name: {"ansible_connection": "local", **HOSTILE_VALUES[case][0]}
        for name, case in names.items()
    }
    (tmp_path / "hosts.yml").write_text(json.dumps({"all": {"hosts": hosts}}))
    done = subprocess.run(
        [ansible, "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")],
        capture_output=True,
        text=True,
        env=playbook_env(dict(os.environ)),  # the edgebench_status callback's JSON lines
        check=False,
        timeout=120,
    )
    events = [parse_event(line) for line in done.stdout.splitlines()]
    checked = {e["host"]: e["event"] for e in events if e and e.get("task") == "inventory values"}
    for name, case in names.items():
        expected = "ok" if HOSTILE_VALUES[case][1] else "failed"
        assert checked.get(name) == expected, (case, done.stdout[-2000:], done.stderr[-2000:])
