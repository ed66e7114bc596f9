"""Each host's state from the playbook's events (the JSON lines of the edgebench_status
callback), the status line a step prints, and the rows of the final table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and "event" in event and "host" in event else None


@dataclass(frozen=True)
class CellCounts:
    done: int
    failed: int
    total: int | None  # None when the plan run did not write its status


def count_cells(results: Path) -> CellCounts:
    """Cells done and failed in a fetched plan folder: from plan-status.json, or (a run
    stopped before writing it) the run folders with a summary.json."""
    try:
        status = json.loads((results / "plan-status.json").read_text(encoding="utf-8"))
        cells = status["cells"]
        states = [str(c.get("status", c.get("state", ""))) for c in _cell_list(cells)]
        return CellCounts(states.count("done"), states.count("failed"), len(states))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        runs = results / "runs"
        done = sum(1 for p in runs.glob("*/summary.json")) if runs.is_dir() else 0
        return CellCounts(done, 0, None)


def _cell_list(cells: Any) -> list[dict[str, Any]]:
    """plan-status.json's cells: a list of objects, or an object keyed by cell id."""
    if isinstance(cells, dict):
        return [dict(value, id=key) for key, value in cells.items()]
    return list(cells)
