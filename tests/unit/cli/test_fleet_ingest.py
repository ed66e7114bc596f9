"""`edgebench fleet run --ingest FILE` with the fleet faked (no Ansible, no host): every
fetched host folder stored when the fleet ends, whatever the hosts' states, printed as
`db ingest` prints it; exit 0 only when every host is complete and nothing was refused; a
database that cannot be used is one line before any host is touched; an interrupted fleet
stores nothing and says how to store it later."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from edgebench.cli.app import main
from edgebench.db import schema
from edgebench.fleet import drive
from edgebench.fleet.drive import HostResult
from edgebench.fleet.inventory import Inventory
from edgebench.fleet.status import COMPLETE, FAILED, UNREACHABLE, CellCounts, HostState
from tests.helpers.cli import assert_one_line_error
from tests.helpers.db_runs import BAD_DATABASES, make_fleet_runs, write_locked
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.plan_runs import write_plan

HOSTS = ("pi5", "laptop")  # the host folders make_fleet_runs writes, two runs each


@pytest.fixture(scope="module")
def fetched_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/<host>/<quant>: two hosts' fetched folders, two completed runs each."""
    root = tmp_path_factory.mktemp("fleet-ingest") / "results"
    with chat_templates_in_process():
        make_fleet_runs(root)
    return root


@dataclass
class FakeFleet:
    """Stands in for `run_fleet`: each host's state as the test sets it, its folder the
    copy of the fetched results; `interrupt` raises KeyboardInterrupt as Ctrl-C does;
    `during` runs while the fleet "runs"."""

    out: Path
    states: dict[str, str] = field(default_factory=lambda: dict.fromkeys(HOSTS, COMPLETE))
    interrupt: bool = False
    during: list = field(default_factory=list)
    calls: int = 0

    def __call__(self, plan: Path, inventory: Inventory, out: Path, **_: object) -> dict:
        self.calls += 1
        assert out == self.out
        for step in self.during:
            step()
        if self.interrupt:
            raise KeyboardInterrupt
        results = {}
        for host, state in self.states.items():
            folder = out / host
            fetched = folder if folder.is_dir() else None
            results[host] = HostResult(HostState(host, state), CellCounts(2, 0, 2), fetched)
        return results


@pytest.fixture
def fleet(
    fetched_once: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeFleet]:
    out = Path(shutil.copytree(fetched_once, tmp_path / "results"))
    (tmp_path / "hosts.ini").write_text("\n".join(HOSTS) + "\n")
    write_plan(tmp_path / "plan")
    fake = FakeFleet(out)
    monkeypatch.setattr(drive, "run_fleet", fake)
    monkeypatch.setattr(drive, "find_playbook_command", lambda: Path("ansible-playbook"))
    monkeypatch.setenv("COLUMNS", "300")
    yield fake


def fleet_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Path) -> tuple[int, str, str]:
    """`edgebench fleet run plan.toml -i hosts.ini -o results --ingest DB` in this process:
    the exit code, stdout and stderr."""
    args = [
        "fleet", "run", str(tmp_path / "plan" / "plan.toml"), "-i", str(tmp_path / "hosts.ini"),
        "-o", str(tmp_path / "results"), "--ingest", str(db),
    ]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    import sys

    sys.__stderr__.write("OUT>" + captured.out + "ERR>" + captured.err)
    return int(exit_info.value.code or 0), captured.out, captured.err


def stored_runs(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return sorted(row[0] for row in conn.execute("SELECT folder FROM runs"))


def test_every_host_complete_stores_every_run_after_the_table_and_exits_0(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "fleet.db"
    code, out, err = fleet_run(capsys, tmp_path, db)
    assert code == 0, err
    lines = out.splitlines()
    added = [line for line in lines if line.startswith("added: ")]
    assert len(added) == 4
    assert out.index("edgebench fleet") < out.index("added: ")  # the table, then the ingest
    assert lines[-1] == f"{db}: 4 added, 0 replaced, 0 unchanged, 0 refused"
    assert stored_runs(db) == sorted(
        str((fleet.out / host / quant).resolve()) for host in HOSTS for quant in ("Q4_K_M", "Q8_0")
    )
    # The same fleet again (every cell done): nothing changes in the database.
    code, out, _ = fleet_run(capsys, tmp_path, db)
    assert code == 0
    assert out.splitlines()[-1] == f"{db}: 0 added, 0 replaced, 4 unchanged, 0 refused"


def test_a_failed_hosts_partial_run_is_stored_exit_1_and_replaced_once_resumed(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = fleet.out / "laptop" / "Q8_0" / "samples.jsonl"
    full = samples.read_text()
    samples.write_text("".join(full.splitlines(keepends=True)[:4]))  # stopped mid-run
    fleet.states["laptop"] = FAILED
    db = tmp_path / "fleet.db"
    code, out, err = fleet_run(capsys, tmp_path, db)
    assert code == 1, err  # a host failed, whatever the ingest did
    assert out.splitlines()[-1] == f"{db}: 4 added, 0 replaced, 0 unchanged, 0 refused"
    samples.write_text(full)  # what the next fleet run's resume fetches
    fleet.states["laptop"] = COMPLETE
    code, out, err = fleet_run(capsys, tmp_path, db)
    assert code == 0, err
    assert f"replaced: {samples.parent}" in out
    assert out.splitlines()[-1] == f"{db}: 0 added, 1 replaced, 3 unchanged, 0 refused"


def test_hosts_with_nothing_fetched_are_left_out_without_an_error(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(fleet.out / "laptop")  # unreachable from the start: never fetched
    (fleet.out / "pi4").mkdir()  # fetched, but its plan run stopped before any run folder
    (fleet.out / "pi4" / "plan-status.json").write_text("{}")
    fleet.states.update(laptop=UNREACHABLE, pi4=FAILED)
    db = tmp_path / "fleet.db"
    code, out, err = fleet_run(capsys, tmp_path, db)
    assert code == 1
    assert "Traceback" not in err and "refused" not in err
    assert out.splitlines()[-1] == f"{db}: 2 added, 0 replaced, 0 unchanged, 0 refused"


def test_a_refused_folder_is_one_line_the_others_are_stored_and_it_exits_1(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = fleet.out / "pi5" / "Q8_0" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["settings"]["threads"] = "four"
    manifest.write_text(json.dumps(data))
    db = tmp_path / "fleet.db"
    code, out, err = fleet_run(capsys, tmp_path, db)
    assert_one_line_error(code, err, "refused:", str(manifest), "$.settings.threads", exit_code=1)
    assert out.splitlines()[-1] == f"{db}: 3 added, 0 replaced, 0 unchanged, 1 refused"
    assert len(stored_runs(db)) == 3
    assert manifest.is_file()  # the fleet's results stay where they are


NO_FOLDER = (None, "does not exist")


@pytest.mark.parametrize(
    ("make", "fragment"),
    [*BAD_DATABASES.values(), NO_FOLDER],
    ids=[*BAD_DATABASES, "no such folder"],
)
def test_a_database_that_cannot_be_used_is_one_line_before_any_host(
    fleet: FakeFleet,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], object] | None,
    fragment: str,
) -> None:
    db = tmp_path / "fleet.db" if make else tmp_path / "no-such" / "fleet.db"
    if make:
        make(db)
    before = sorted(fleet.out.rglob("*"))
    code, _, err = fleet_run(capsys, tmp_path, db)
    assert_one_line_error(code, err, str(db), fragment)
    assert fleet.calls == 0  # no host touched
    assert sorted(fleet.out.rglob("*")) == before


def test_a_locked_database_is_one_line_before_any_host(
    fleet: FakeFleet,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "fleet.db"
    schema.open_db(db, create=True).close()
    with write_locked(db, monkeypatch):
        code, _, err = fleet_run(capsys, tmp_path, db)
    assert_one_line_error(code, err, str(db), "locked")
    assert fleet.calls == 0


def test_a_folder_where_no_file_can_be_made_is_one_line_before_any_host(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = Path("/proc/fleet.db")  # a folder nobody, root included, can create a file in
    code, _, err = fleet_run(capsys, tmp_path, db)
    assert_one_line_error(code, err, str(db), "cannot write the database file or its folder")
    assert fleet.calls == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_an_existing_database_in_a_read_only_folder_is_one_line_before_any_host(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "fleet.db"
    schema.open_db(db, create=True).close()
    folder.chmod(0o500)  # no journal can be made beside it: every write fails
    try:
        code, _, err = fleet_run(capsys, tmp_path, db)
    finally:
        folder.chmod(0o700)
    assert_one_line_error(code, err, str(db), "cannot write")
    assert fleet.calls == 0


def test_an_interrupted_fleet_stores_nothing_and_says_how_to_store_it_later(
    fleet: FakeFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet.interrupt = True
    db = tmp_path / "fleet.db"
    code, out, err = fleet_run(capsys, tmp_path, db)
    assert code == 130
    assert "added" not in out
    assert stored_runs(db) == []
    hint = f"edgebench db ingest {fleet.out} --db {db}"
    assert_one_line_error(code, err, "interrupted:", "resume", hint, exit_code=130)


def test_a_database_that_fails_after_the_fleet_keeps_the_results_and_says_where(
    fleet: FakeFleet,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "fleet.db"
    with ExitStack() as stack:
        # Another writer takes the database while the fleet runs (it was free up front).
        fleet.during.append(lambda: stack.enter_context(write_locked(db, monkeypatch)))
        code, out, err = fleet_run(capsys, tmp_path, db)
    hint = f"edgebench db ingest {fleet.out} --db {db}"
    assert_one_line_error(code, err, str(db), "locked", f"kept in {fleet.out}", hint, exit_code=1)
    assert "laptop" in out and "pi5" in out  # the hosts' table came first
    assert len(list(fleet.out.rglob("manifest.json"))) == 4
    # Once the database is free, the hint's command stores them.
    with pytest.raises(SystemExit) as exit_info:
        main(["db", "ingest", str(fleet.out), "--db", str(db)])
    assert not exit_info.value.code
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .endswith("4 added, 0 replaced, 0 unchanged, 0 refused")
    )
