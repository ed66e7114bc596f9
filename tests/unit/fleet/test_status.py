"""Each host's state from canned callback events, the status lines they print, the final
table, and the cells counted in a fetched plan folder."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

from rich.console import Console

from edgebench.cli.fleet_cmd import results_table
from edgebench.fleet.drive import HostResult, _collect
from edgebench.fleet.status import (
    COMPLETE,
    FAILED,
    UNREACHABLE,
    CellCounts,
    Fleet,
    HostState,
    count_cells,
    parse_event,
)


def ok(host: str, task: str) -> dict[str, Any]:
    return {"event": "ok", "host": host, "task": task, "rc": 0, "msg": ""}


def recap(host: str, failures: int = 0, unreachable: int = 0) -> dict[str, Any]:
    return {"event": "recap", "host": host, "failures": failures, "unreachable": unreachable}


EVENTS = [
    ok("a", "connect"),
    ok("b", "connect"),
    ok("a", "remote folder"),  # plumbing: no line
    ok("a", "install edgebench"),
    {"event": "skipped", "host": "b", "task": "ship the source", "rc": None, "msg": ""},
    ok("a", "run the plan"),
    {"event": "failed", "host": "b", "task": "run the plan", "rc": 1, "msg": "error: cell x"},
    ok("b", "fetch the results"),
    ok("a", "fetch the results"),
    {"event": "unreachable", "host": "c", "task": "connect", "rc": None, "msg": "timed out"},
    recap("a"),
    recap("b", failures=1),
    recap("c", unreachable=1),
]


def play(events: list[dict[str, Any]]) -> tuple[Fleet, list[str]]:
    fleet = Fleet({host: HostState(host) for host in ("a", "b", "c", "d")})
    lines = [line for event in events if (line := fleet.apply(event))]
    return fleet, lines


def test_each_host_ends_in_the_state_its_events_say() -> None:
    fleet, _ = play(EVENTS)
    states = {host: (s.state, s.reason) for host, s in fleet.hosts.items()}
    assert states["a"] == (COMPLETE, "")
    assert states["b"] == (FAILED, "error: cell x (exit 1)")
    assert states["c"] == (UNREACHABLE, "timed out")
    assert states["d"][0] == "not started"


def test_a_line_per_step_as_it_finishes_and_per_failure() -> None:
    _, lines = play(EVENTS)
    assert lines == [
        "a: connected",
        "b: connected",
        "a: edgebench installed",
        "a: plan run finished",
        "b: failed at 'run the plan': error: cell x (exit 1)",
        "b: results fetched",
        "a: results fetched",
        "c: unreachable at 'connect': timed out",
    ]


def test_a_play_that_ends_before_the_plan_ran_is_not_complete() -> None:
    fleet, _ = play([ok("a", "connect"), recap("a")])
    assert fleet.hosts["a"].state == FAILED
    assert "after 'connect'" in fleet.hosts["a"].reason


def test_an_ignored_failure_changes_nothing() -> None:
    event = {"event": "failed", "host": "a", "task": "x", "ignored": True, "msg": "m"}
    fleet, lines = play([event])
    assert lines == [] and fleet.hosts["a"].reason == ""


def test_only_callback_events_are_events() -> None:
    assert parse_event('{"event": "ok", "host": "a", "task": "t"}\n') is not None
    for line in ("[WARNING]: something", "[1, 2]", '{"host": "a"}', ""):
        assert parse_event(line) is None


def _results(folder: Path, cells: dict[str, str] | None, summaries: int = 0) -> Path:
    for index in range(summaries):
        (folder / "runs" / f"cell{index}").mkdir(parents=True)
        (folder / "runs" / f"cell{index}" / "summary.json").write_text("{}")
    folder.mkdir(parents=True, exist_ok=True)
    if cells is not None:
        listed = [{"id": key, "status": value} for key, value in cells.items()]
        (folder / "plan-status.json").write_text(json.dumps({"cells": listed}))
    return folder


def test_cells_from_plan_status_or_from_finished_run_folders(tmp_path: Path) -> None:
    status = _results(tmp_path / "x", {"c1": "done", "c2": "failed", "c3": "done"})
    assert count_cells(status) == CellCounts(2, 1, 3)
    stopped = _results(tmp_path / "y", None, summaries=2)
    assert count_cells(stopped) == CellCounts(2, 0, None)


def test_the_table_names_every_host_its_cells_folder_and_why(tmp_path: Path) -> None:
    fleet, _ = play(EVENTS)
    results = {
        "a": HostResult(fleet.hosts["a"], CellCounts(4, 0, 4), tmp_path / "a"),
        "b": HostResult(fleet.hosts["b"], CellCounts(1, 0, None), tmp_path / "b"),
        "c": HostResult(fleet.hosts["c"], CellCounts(0, 0, None), None),
    }
    console = Console(width=300, record=True)
    console.print(results_table(results))
    text = console.export_text()
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if "│" in line}
    assert "complete" in rows["a"] and "4/4" in rows["a"] and str(tmp_path / "a") in rows["a"]
    assert "failed" in rows["b"] and "error: cell x (exit 1)" in rows["b"]
    assert "unreachable" in rows["c"] and "timed out" in rows["c"]


def _tarball(path: Path, members: dict[str, str]) -> Path:
    source = path.parent / "src"
    for name, text in members.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    with tarfile.open(path, "w:gz") as tar:
        for name in members:
            tar.add(source / name, arcname=name)
    return path


def test_fetched_results_replace_the_older_copy_and_count(tmp_path: Path) -> None:
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    _tarball(incoming / "a.tar.gz", {"results/runs/c1/summary.json": "{}", "other/x": "no"})
    old = tmp_path / "out" / "a"
    old.mkdir(parents=True)
    (old / "stale.txt").write_text("old copy")
    result = _collect(HostState("a", COMPLETE), incoming, tmp_path / "out", tmp_path)
    assert result.folder == old
    assert sorted(p.relative_to(old).as_posix() for p in old.rglob("*")) == [
        "runs",
        "runs/c1",
        "runs/c1/summary.json",
    ]
    assert result.cells == CellCounts(1, 0, None)
    assert result.state.state == COMPLETE


def test_a_host_never_started_is_failed_and_says_where_the_log_is(tmp_path: Path) -> None:
    result = _collect(HostState("d"), tmp_path, tmp_path / "out", tmp_path / ".fleet")
    assert result.state.state == FAILED and "ansible.log" in result.state.reason
    assert result.folder is None


def test_a_host_tarball_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    tarball = tmp_path / "evil.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        info = tarfile.TarInfo("results/../../escaped.txt")
        data = b"x"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    tarball.rename(incoming / "a.tar.gz")
    result = _collect(HostState("a", COMPLETE), incoming, tmp_path / "out", tmp_path)
    assert result.state.state == FAILED and "could not be unpacked" in result.state.reason
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "out" / "escaped.txt").exists()
