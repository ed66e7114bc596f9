"""What a plan folder holds: each cell done, partial or new, and plan-status.json.

    DIR/plan.toml           the plan as last run
    DIR/runs/<cell-id>/     one ordinary run folder per run cell
    DIR/bench/<cell-id>.json
    DIR/logs/<cell-id>.log  what each cell's process printed, every attempt appended
    DIR/plan-status.json    each cell done / failed / skipped with its output and settings

A cell is done when its run folder's manifest says `completed` and its summary is there
(a bench file: `completed`); a folder that exists but did not complete is partial and
continues with `edgebench run --resume` (a bench starts again: it has no resume).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from edgebench.errors import UserError
from edgebench.io import write_json_atomic
from edgebench.plan.cells import Cell
from edgebench.readback import json_type, present, read_json, read_json_object
from edgebench.runfolder.folder import LOCK_FILE
from edgebench.runfolder.read import MANIFEST, SUMMARY
from edgebench.system.versions import utc_now

STATUS_FILE = "plan-status.json"
PLAN_COPY = "plan.toml"
LOGS = "logs"
STATUS_KIND = "edgebench-plan-status"

Found = Literal["done", "partial", "new"]
CellStatus = Literal["done", "failed", "skipped"]


def found(cell: Cell, root: Path) -> Found:
    """What the plan folder holds of `cell`."""
    output = cell.output(root)
    if cell.kind == "bench":
        if not present(output):
            return "new"
        return "done" if _json_field(output, "status") == "completed" else "partial"
    manifest = output / MANIFEST
    if not present(manifest):  # anything there (a FIFO too) makes the cell partial
        return "new"
    done = _json_field(manifest, "status") == "completed" and (output / SUMMARY).is_file()
    return "done" if done else "partial"


def leftover(cell: Cell, root: Path) -> list[Path]:
    """Files in a run cell's folder that no run wrote a manifest for (a run stopped
    before it began leaves none but its lock file, which a new run takes over)."""
    output = cell.output(root)
    if cell.kind != "run" or not output.is_dir() or (output / MANIFEST).exists():
        return []
    return [p for p in output.iterdir() if p.name != LOCK_FILE]


def _json_field(path: Path, key: str) -> Any:
    """A top-level field of a JSON file, or None when it cannot be read (a hostile file:
    the cell is then partial, and its run's own reader says why in one line)."""
    try:
        data = read_json(path, "run file")
    except UserError:
        return None
    return data.get(key) if isinstance(data, dict) else None


@dataclass
class CellReport:
    """One cell's line of plan-status.json."""

    id: str
    kind: str
    status: CellStatus
    output: str  # relative to the plan folder: runs/<id> or bench/<id>.json
    settings: dict[str, Any]
    ran: bool = False  # run (or continued) by this invocation
    exit_code: int | None = None
    error: str | None = None  # the cell's last error line, or why it was skipped
    wall_s: float | None = None


@dataclass
class PlanStatus:
    plan: str  # the plan file as given
    device_name: str | None
    started_at: str
    state: str = "running"  # running, finished, interrupted
    finished_at: str | None = None
    cells: list[CellReport] = field(default_factory=list)
    # cells an earlier version of the plan had, by id -> settings: their outputs stay,
    # and the plan may not bring them back with other settings
    retired: dict[str, dict[str, Any]] = field(default_factory=dict)

    def write(self, root: Path) -> None:
        write_json_atomic(root / STATUS_FILE, {"kind": STATUS_KIND, **asdict(self)})

    def counts(self) -> dict[str, int]:
        counts = {"done": 0, "failed": 0, "skipped": 0}
        for cell in self.cells:
            counts[cell.status] += 1
        return counts


def new_status(plan: str, device_name: str | None, cells: Sequence[Cell], root: Path) -> PlanStatus:
    status = PlanStatus(plan, device_name, utc_now())
    ids = {cell.id for cell in cells}
    status.retired = {k: v for k, v in _stored_settings(root).items() if k not in ids}
    for cell in cells:
        done = found(cell, root) == "done"
        status.cells.append(
            CellReport(
                id=cell.id,
                kind=cell.kind,
                status="done" if done else "skipped",
                output=str(cell.output(root).relative_to(root)),
                settings=_as_json(cell.settings),
                error=None if done else "not run yet",
            )
        )
    return status


def check_unchanged(cells: Sequence[Cell], root: Path) -> None:
    """A cell whose output is there must still be the cell that made it: the same id
    with other settings would mix two measurements under one name."""
    stored = _stored_settings(root)
    for cell in cells:
        before = stored.get(cell.id)
        if before is None or found(cell, root) == "new":
            continue
        now = _as_json(cell.settings)
        if before != now:
            key = next(k for k in sorted({*before, *now}) if before.get(k) != now.get(k))
            raise UserError(
                f"{root / STATUS_FILE}: cell {cell.id}: its settings changed since it ran "
                f"({key}: {_shown(before.get(key))} -> {_shown(now.get(key))}); run the "
                f"changed plan with another --out, or remove {cell.output(root)} to run the "
                "cell again"
            )


def _shown(value: Any, limit: int = 120) -> str:
    """A stored setting as an error quotes it: a hand-edited value may be megabytes."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _stored_settings(root: Path) -> dict[str, dict[str, Any]]:
    """Each cell's settings as plan-status.json stored them (a hand-edited or fetched
    file may hold anything: every field is checked, a problem is one line naming it)."""
    path = root / STATUS_FILE
    if not present(path):
        return {}
    data = read_json_object(path, "the plan status")

    def refuse(field: str, problem: str) -> UserError:
        return UserError(f"{path}: {field}: {problem}; is this a plan folder?")

    if data.get("kind") != STATUS_KIND:
        raise refuse("kind", f"not {STATUS_KIND!r}")
    cells, retired = data.get("cells"), data.get("retired", {})
    if not isinstance(cells, list):
        raise refuse("cells", f"must be an array, got {json_type(cells)}")
    if not isinstance(retired, dict):
        raise refuse("retired", f"must be an object, got {json_type(retired)}")
    stored: dict[str, dict[str, Any]] = {}
    for key, settings in retired.items():
        if not isinstance(settings, dict):
            raise refuse(f"retired.{key}", f"must be an object, got {json_type(settings)}")
        stored[key] = settings
    for number, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise refuse(f"cells[{number}]", f"must be an object, got {json_type(cell)}")
        cell_id, settings = cell.get("id"), cell.get("settings")
        if not isinstance(cell_id, str):
            raise refuse(f"cells[{number}].id", f"must be a string, got {json_type(cell_id)}")
        if not isinstance(settings, dict):
            problem = f"must be an object, got {json_type(settings)}"
            raise refuse(f"cells[{number}].settings", problem)
        stored[cell_id] = settings
    return stored


def _as_json(settings: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(settings, default=str))
    return result
