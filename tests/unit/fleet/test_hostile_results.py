"""A host's fetched results are not trusted: a plan-status.json that is hostile (an
over-long integer, 100,000-level nesting, too large, the wrong shape) fails that host
with the reason, and the controller still prints its table and stores the other hosts'
runs with --ingest."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgebench import readback
from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.fleet import drive
from edgebench.fleet.drive import _collect
from edgebench.fleet.inventory import Inventory
from edgebench.fleet.payload import read_plan_payload
from edgebench.fleet.status import COMPLETE, FAILED, HostState, count_cells
from tests.helpers.db_runs import make_fleet_runs
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.plan_runs import write_plan

DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE = {
    "huge-int": ('{"cells": [], "n": ' + "9" * 5000 + "}", "integer with 5000 digits"),
    "deep": ('{"cells": ' + DEEP + "}", "nested too deeply"),
    "cells-a-number": ('{"cells": 5}', "cells: must be an array, got a number"),
    "cell-a-string": ('{"cells": ["done"]}', "cells[0]: must be an object, got a string"),
    "status-a-list": ('{"cells": [{"status": ["done"]}]}', "cells[0].status: must be a string"),
    "an-array": ("[1]", "must be a JSON object, got an array"),
    "not-json": ('{"cells": [', "not valid JSON"),
}


@pytest.mark.parametrize("how", list(HOSTILE))
def test_a_hostile_plan_status_is_counted_as_nothing_with_the_reason(
    how: str, tmp_path: Path
) -> None:
    text, fragment = HOSTILE[how]
    (tmp_path / "plan-status.json").write_text(text)
    cells = count_cells(tmp_path)
    assert (cells.done, cells.failed, cells.total) == (0, 0, None)
    assert cells.problem is not None and fragment in cells.problem
    assert "plan-status.json" in cells.problem and "\n" not in cells.problem


def test_a_plan_status_that_is_not_a_regular_file_or_too_large(tmp_path: Path) -> None:
    status = tmp_path / "plan-status.json"
    os.mkfifo(status)
    assert "is a FIFO" in str(count_cells(tmp_path).problem)
    status.unlink()
    status.symlink_to("/dev/zero")
    assert "is a link to a character device" in str(count_cells(tmp_path).problem)
    status.unlink()
    with status.open("wb") as handle:
        handle.truncate(readback.MAX_DOCUMENT_BYTES + 1)
    assert "larger than the 64 MiB limit" in str(count_cells(tmp_path).problem)


def _tarball(path: Path, results: Path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        tar.add(results, arcname="results")


def test_the_host_is_failed_with_the_reason_when_its_status_is_hostile(tmp_path: Path) -> None:
    results = tmp_path / "host" / "results"
    results.mkdir(parents=True)
    (results / "plan-status.json").write_text(HOSTILE["deep"][0])
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    _tarball(incoming / "a.tar.gz", results)
    result = _collect(HostState("a", COMPLETE), incoming, tmp_path / "out", tmp_path)
    assert result.state.state == FAILED
    assert "plan-status.json" in result.state.reason and "nested too deeply" in result.state.reason


@pytest.fixture
def fleet_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two hosts' results as tarballs, laptop's plan-status.json hostile; `run_fleet`
    stands in for Ansible and unpacks and counts them as the real one does."""
    fetched = tmp_path / "fetched"
    with chat_templates_in_process():
        make_fleet_runs(fetched)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    for host in ("pi5", "laptop"):
        status = {"kind": "edgebench-plan-status", "cells": [{"status": "done"}] * 2}
        text = json.dumps(status) if host == "pi5" else HOSTILE["huge-int"][0]
        (fetched / host / "plan-status.json").write_text(text)
        _tarball(incoming / f"{host}.tar.gz", fetched / host)
    out = tmp_path / "results"

    def fake_run_fleet(plan: Path, inventory: Inventory, out: Path, **_: object) -> dict:
        states = {host: HostState(host, COMPLETE) for host in ("pi5", "laptop")}
        return {h: _collect(s, incoming, out, out / ".fleet") for h, s in states.items()}

    (tmp_path / "hosts.ini").write_text("pi5\nlaptop\n")
    write_plan(tmp_path / "plan")
    monkeypatch.setattr(drive, "run_fleet", fake_run_fleet)
    monkeypatch.setattr(drive, "find_playbook_command", lambda: Path("ansible-playbook"))
    monkeypatch.setenv("COLUMNS", "400")
    yield out
    shutil.rmtree(out, ignore_errors=True)


def test_the_controller_prints_its_table_and_ingests_the_other_hosts(
    fleet_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "fleet.db"
    args = [
        "fleet", "run", str(tmp_path / "plan" / "plan.toml"), "-i", str(tmp_path / "hosts.ini"),
        "-o", str(fleet_out), "--ingest", str(db),
    ]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    assert exit_info.value.code == 1, captured.err
    assert "Traceback" not in captured.out + captured.err
    table = captured.out[: captured.out.index("added: ")]
    laptop = next(line for line in table.splitlines() if "laptop" in line)
    assert FAILED in laptop and "integer with 5000 digits" in laptop
    pi5 = next(line for line in table.splitlines() if "pi5" in line)
    assert COMPLETE in pi5
    assert f"{db}: 4 added" in captured.out  # every host's runs stored all the same


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x = " + DEEP, "not valid TOML (nested too deeply)"),
        ("x = " + "9" * 5000, "not valid TOML"),
    ],
)
def test_the_payload_reads_the_plan_as_boundedly(text: str, fragment: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    with pytest.raises(UserError) as exc:
        read_plan_payload(plan)
    assert str(plan) in str(exc.value) and fragment in str(exc.value)
    plan.unlink()
    plan.symlink_to("/dev/zero")
    with pytest.raises(UserError, match="is a link to a character device"):
        read_plan_payload(plan)
