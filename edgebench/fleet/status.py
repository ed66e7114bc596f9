"""Each host's state from the playbook's events (the JSON lines of the edgebench_status
callback), the status line a step prints, and the rows of the final table."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.readback import READ_BACK_ANY, decode_json, json_type, present, read_json_object

STATUS_FILE = "plan-status.json"  # what `plan run` writes in a host's results
# Playbook tasks that are steps a user follows (the others are plumbing), in order,
# with what a finished one means.
STEPS = {
    "connect": "connected",
    "ship the source": "source copied",
    "install edgebench": "edgebench installed",
    "copy the plan": "plan copied",
    "push the models": "models pushed",
    "pull the models": "models pulled",
    "run the plan": "plan run finished",
    "fetch the results": "results fetched",
}
RUN_STEP = "run the plan"
COMPLETE, FAILED, UNREACHABLE, RUNNING, NOT_STARTED = (
    "complete",
    "failed",
    "unreachable",
    "running",
    "not started",
)


@dataclass(frozen=True)
class HostState:
    host: str
    state: str = NOT_STARTED
    step: str = ""  # the last step that finished, or the one that failed
    reason: str = ""  # why it failed, one line
    plan_done: bool = False


@dataclass
class Fleet:
    """Every host's state, updated event by event."""

    hosts: dict[str, HostState] = field(default_factory=dict)

    def apply(self, event: dict[str, Any]) -> str | None:
        """Take one callback event; the status line to print, if it is one."""
        name = str(event.get("host", ""))
        task = str(event.get("task", ""))
        kind = event.get("event")
        host = self.hosts.get(name, HostState(name))
        if host.state == NOT_STARTED:
            host = replace(host, state=RUNNING)
        line = None
        if kind == "unreachable":
            host = replace(host, state=UNREACHABLE, step=task, reason=_reason(event))
            line = f"{name}: unreachable at '{task}': {host.reason}"
        elif kind == "failed" and not event.get("ignored"):
            host = replace(host, state=FAILED, step=task, reason=_reason(event))
            line = f"{name}: failed at '{task}': {host.reason}"
        elif kind == "ok" and task in STEPS:
            host = replace(host, step=task, plan_done=host.plan_done or task == RUN_STEP)
            line = f"{name}: {STEPS[task]}"
        elif kind == "recap" and host.state == RUNNING:
            # The play ended for this host without a failure: complete if the plan ran.
            complete = host.plan_done and not event.get("failures") and not event.get("unreachable")
            host = replace(host, state=COMPLETE if complete else FAILED)
            if not complete and not host.reason:
                host = replace(host, reason=f"the play stopped after '{host.step}'")
        self.hosts[name] = host
        return line


def _reason(event: dict[str, Any]) -> str:
    message = str(event.get("msg") or "").strip()
    rc = event.get("rc")
    if rc not in (None, 0) and message:
        return f"{message} (exit {rc})"
    return message or (f"exit {rc}" if rc is not None else "no message")


def parse_event(line: str) -> dict[str, Any] | None:
    """A callback event from one line of ansible-playbook's stdout, or None for anything
    else (a warning, a line of a module's output)."""
    try:
        event = decode_json(line, "event", READ_BACK_ANY)
    except UserError:  # not one of ours (or a line no decoder should take whole)
        return None
    return event if isinstance(event, dict) and "event" in event and "host" in event else None


@dataclass(frozen=True)
class CellCounts:
    done: int
    failed: int
    total: int | None  # None when the plan run did not write its status
    # why the fetched plan-status.json could not be read (a host's file is not trusted)
    problem: str | None = None


def count_cells(results: Path) -> CellCounts:
    """Cells done and failed in a fetched plan folder: from plan-status.json, or (a run
    stopped before writing it) the run folders with a summary.json. A status file that
    is there but cannot be read (hostile or torn: too large, too deep, not JSON, the
    wrong shape) is counted as nothing, with the one-line reason in `problem`."""
    path = results / STATUS_FILE
    if not present(path):
        runs = results / "runs"
        done = sum(1 for p in runs.glob("*/summary.json")) if runs.is_dir() else 0
        return CellCounts(done, 0, None)
    try:
        status = read_json_object(path, "plan status")
        states = [_state(cell, path, i) for i, cell in enumerate(_cell_list(status, path))]
    except UserError as exc:
        return CellCounts(0, 0, None, str(exc))
    return CellCounts(states.count("done"), states.count("failed"), len(states))


def _cell_list(status: dict[str, Any], path: Path) -> list[Any]:
    """plan-status.json's cells: a list of objects, or an object keyed by cell id."""
    cells = status.get("cells")
    if isinstance(cells, dict):
        return list(cells.values())
    if isinstance(cells, list):
        return cells
    raise UserError(f"{path}: cells: must be an array, got {json_type(cells)}")


def _state(cell: Any, path: Path, number: int) -> str:
    if not isinstance(cell, dict):
        raise UserError(f"{path}: cells[{number}]: must be an object, got {json_type(cell)}")
    state = cell.get("status", cell.get("state", ""))
    if not isinstance(state, str):
        raise UserError(f"{path}: cells[{number}].status: must be a string")
    return state
