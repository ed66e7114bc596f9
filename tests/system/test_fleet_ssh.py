"""`edgebench fleet run` over real SSH and Ansible: two loopback hosts (tests/helpers/
ssh_fleet.py), each installing edgebench offline from this source and running a plan of
SmolLM2 x 2 constraint modes x --limit 3. host-a's whole namespace is killed once its first
cell is complete: host-b still completes and `fleet run` exits 1 naming host-a. With
host-a back, the same command completes it without rerunning the finished cell, and both
hosts' plan folders are fetched, each run recording its host's own device identity. Both
`fleet run`s store what they fetched in the results database (`--ingest`): host-b's runs
after the first, host-a's added and host-b's unchanged after the second; a separate
`db ingest` then changes nothing, and the database's report names both devices.

Skipped (saying why) where sshd, unshare, root or Ansible are missing; in CI (CI=true) it
fails instead. Run it under `flock /tmp/edgebench-cpu.lock` on a shared machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from edgebench.runfolder.read import read_samples
from tests.helpers.cli import edgebench_ok
from tests.helpers.needs import unavailable
from tests.helpers.pages import table_cells
from tests.helpers.run_folder import manifest_of
from tests.helpers.ssh_fleet import SshHost, missing_tools, start_fleet

pytestmark = pytest.mark.model

PLAN = """\
models = ["smollm2-135m-instruct"]
constraints = ["none", "mask"]
threads = [1]

[run]
limit = 3
max_tokens = 48
idle_baseline = 0
"""
CELLS = ("smollm2-135m-instruct.edgejson.none.t1.r1", "smollm2-135m-instruct.edgejson.mask.t1.r1")


@pytest.fixture
def tools() -> None:
    missing = missing_tools()
    if missing:
        unavailable(f"the fleet test needs loopback SSH hosts: {missing}")


def fleet_run(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "edgebench", "fleet", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "400"},  # the table's rows on one line each
    )


def first_finished_cell(host: SshHost, process: subprocess.Popen[str]) -> Path:
    """host's first cell folder with a summary.json (complete), polled on its disk."""
    runs = host.root / "results" / "runs"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and process.poll() is None:
        finished = sorted(runs.glob("*/summary.json")) if runs.is_dir() else []
        if finished:
            return finished[0].parent
        time.sleep(0.2)
    out, err = process.communicate()
    raise AssertionError(f"{host.name} finished no cell: {out}\n{err}")


def open_sessions(host: SshHost, wait_s: float = 10.0) -> list[str]:
    """The sshd processes serving a connection on `host` (below its listening sshd),
    after up to `wait_s` for ones that are closing."""
    assert host.process is not None
    deadline = time.monotonic() + wait_s
    while True:
        listeners = psutil.Process(host.process.pid).children()
        sessions = [p.name() for listener in listeners for p in listener.children(recursive=True)]
        if not sessions or time.monotonic() > deadline:
            return sessions
        time.sleep(0.2)


def row(table: str, host: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(f"│ {host} "))


def test_a_killed_host_fails_alone_and_the_next_fleet_run_completes_it(
    smollm2: Path, tools: None, tmp_path: Path
) -> None:
    started = time.monotonic()
    plan = tmp_path / "plan" / "plan.toml"
    plan.parent.mkdir()
    plan.write_text(PLAN)
    fleet = start_fleet(tmp_path / "fleet")
    host_a = fleet.hosts[0]
    out = tmp_path / "results"
    db = tmp_path / "fleet.db"
    args = (str(plan), "--inventory", str(fleet.inventory), "--out", str(out), "--push-models")
    args += ("--ingest", str(db))
    try:
        first = fleet_run(*args)
        finished = first_finished_cell(host_a, first)
        host_a.kill()
        manifest = (finished / "manifest.json").read_bytes()
        mtime = (finished / "manifest.json").stat().st_mtime_ns
        stdout, stderr = first.communicate(timeout=900)
        print(stderr, stdout, f"first fleet run: {time.monotonic() - started:.0f} s", sep="\n")
        assert first.returncode == 1, stderr
        assert "complete" in row(stdout, "host-b") and "2/2" in row(stdout, "host-b")
        assert "complete" not in row(stdout, "host-a"), stdout
        assert "host-a: unreachable" in stderr or "host-a: failed" in stderr
        # What host-b fetched is stored although the fleet failed.
        assert stdout.splitlines()[-1] == f"{db}: 2 added, 0 replaced, 0 unchanged, 0 refused"

        host_a.start()
        second = fleet_run(*args)
        stdout, stderr = second.communicate(timeout=900)
        print(stderr, stdout, sep="\n")
        assert second.returncode == 0, stdout + stderr
        for host in fleet.hosts:  # its connections closed: no sshd session left there
            assert open_sessions(host) == [], host.name
        assert "complete" in row(stdout, "host-a") and "2/2" in row(stdout, "host-a")
        # host-a's two runs added; host-b's, fetched again unchanged, left as they were.
        assert stdout.splitlines()[-1] == f"{db}: 2 added, 0 replaced, 2 unchanged, 0 refused"
        # The finished cell was not run again: its folder on host-a is as it was.
        assert (finished / "manifest.json").read_bytes() == manifest
        assert (finished / "manifest.json").stat().st_mtime_ns == mtime
        units = set()
        for host in ("host-a", "host-b"):
            status = json.loads((out / host / "plan-status.json").read_text())
            assert status["device_name"] == host
            assert [cell["status"] for cell in status["cells"]] == ["done", "done"]
            for cell in CELLS:
                # Three examples; a contended one's re-timed line supersedes its first
                # (two hosts on two cores contend), so the final records are three.
                samples, torn = read_samples(out / host / "runs" / cell)
                assert (len(samples), torn) == (3, False)
                identity = manifest_of(out / host / "runs" / cell)["device"]["identity"]
                assert identity["name"] == host
                units.add(identity["unit_id"])
        assert len(units) == 2  # its own /etc/machine-id: one unit per host

        # The fetched folders are what the database and the report read: all stored.
        again = edgebench_ok("db", "ingest", str(out), "--db", str(db)).stdout
        print(again)
        assert again.splitlines()[-1] == f"{db}: 0 added, 0 replaced, 4 unchanged, 0 refused"
        report = tmp_path / "report.html"
        edgebench_ok("report", str(db), "--out", str(report))
        page = report.read_text()
        # The device x model matrix: one row per device (a row-group label row is one cell)
        _, rows = table_cells(page, 'id="device-matrix"')
        devices = sorted(r[0].split(" · ")[0] for r in rows if len(r) > 1)
        assert devices == ["host-a", "host-b"], rows
        compared = edgebench_ok("compare", str(db)).stdout
        print(compared)
        assert "host-a" in compared and "host-b" in compared  # its device column
    finally:
        fleet.stop()
    print(f"fleet test wall time: {time.monotonic() - started:.0f} s")
