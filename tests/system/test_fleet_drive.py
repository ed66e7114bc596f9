"""`fleet run` around ansible-playbook, with a stand-in for it (a script printing the
callback's events and leaving each host's fetched tarball where the playbook would): the
command line Ansible gets, the status lines as events arrive, each host's results
unpacked, the table and the exit code. No SSH, no model: the loopback fleet test
(test_fleet_ssh.py) runs the real thing."""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

import pytest

from edgebench.cli.app import main
from edgebench.fleet import drive

FAKE = """\
#!{python}
import json, sys, tarfile, io, pathlib
argv = sys.argv[1:]
pathlib.Path({record!r}).write_text(json.dumps(argv))
variables = json.loads(pathlib.Path(argv[argv.index("--extra-vars") + 1][1:]).read_text())
incoming = pathlib.Path(variables["fleet_incoming"])
def event(**fields):
    print(json.dumps(fields), flush=True)
print("[WARNING]: not an event")
for host in ("pi5-a", "pi5-b"):
    event(event="ok", host=host, task="connect")
event(event="ok", host="pi5-a", task="run the plan")
event(event="failed", host="pi5-b", task="run the plan", rc=1, msg="error: cell x failed")
for host in ("pi5-a", "pi5-b"):
    status = {{"cells": [{{"id": "c1", "status": "done"}},
                         {{"id": "c2", "status": "done" if host == "pi5-a" else "failed"}}]}}
    with tarfile.open(incoming / f"{{host}}.tar.gz", "w:gz") as tar:
        data = json.dumps(status).encode()
        info = tarfile.TarInfo("results/plan-status.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    event(event="ok", host=host, task="fetch the results")
event(event="recap", host="pi5-a", failures=0, unreachable=0)
event(event="recap", host="pi5-b", failures=1, unreachable=0)
"""


def fleet_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    plan_text: str = 'models = ["smollm2-135m-instruct"]\n',
) -> tuple[int, str, str]:
    """`edgebench fleet run` in this process with the stand-in: exit code, stdout, stderr."""
    fake = tmp_path / "ansible-playbook"
    fake.write_text(FAKE.format(python=sys.executable, record=str(tmp_path / "argv.json")))
    fake.chmod(0o755)
    monkeypatch.setattr(drive, "find_playbook_command", lambda: fake)
    monkeypatch.setenv("COLUMNS", "300")
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("[pis]\npi5-a ansible_host=10.0.0.2\npi5-b ansible_host=10.0.0.3\n")
    plan = tmp_path / "plan" / "plan.toml"
    plan.parent.mkdir()
    plan.write_text(plan_text)
    out = str(tmp_path / "out")
    with pytest.raises(SystemExit) as exit_info:
        main(["fleet", "run", str(plan), "-i", str(inventory), "-o", out])
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def test_fleet_run_reads_the_events_and_unpacks_each_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = fleet_run(tmp_path, capsys, monkeypatch)
    assert code == 1
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[argv.index("--forks") + 1] == "5" and argv[-1] == str(drive.PLAYBOOK)
    assert "pi5-a: connected" in err and "pi5-a: results fetched" in err
    assert "pi5-b: failed at 'run the plan': error: cell x failed (exit 1)" in err
    out = tmp_path / "out"
    assert "not an event" in (out / ".fleet" / "ansible.log").read_text()
    status = json.loads((out / "pi5-a" / "plan-status.json").read_text())
    assert status["cells"][1] == {"id": "c2", "status": "done"}
    variables = json.loads((out / ".fleet" / "vars.json").read_text())
    assert variables["fleet_pull_models"] == ["smollm2-135m-instruct"]
    with tarfile.open(variables["fleet_plan_tarball"]) as tar:
        assert tar.getnames() == ["plan.toml"]


def test_the_table_has_a_row_per_host_and_exit_1_names_the_failed_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, table, _ = fleet_run(tmp_path, capsys, monkeypatch)
    assert code == 1
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if "│" in line}
    assert "complete" in rows["pi5-a"] and "2/2" in rows["pi5-a"]
    assert "failed" in rows["pi5-b"] and "1/2" in rows["pi5-b"]
    assert "error: cell x failed" in rows["pi5-b"]


def test_an_onnx_model_without_push_models_is_one_warning_line_before_any_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = 'models = ["smollm2-135m-instruct@onnx-int4"]\n'
    _, _, err = fleet_run(tmp_path, capsys, monkeypatch, plan)
    lines = err.splitlines()
    assert lines[0].startswith("warning: hosts do not convert smollm2-135m-instruct@onnx-int4 (")
    assert lines[0].endswith("--push-models copies them from this machine")
    assert lines[1] == "fleet: 2 host(s): pi5-a, pi5-b"
