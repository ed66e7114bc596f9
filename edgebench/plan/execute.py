"""`edgebench plan run`: every cell of a plan on this machine, each in a process of its own.

First the quantized variants the cells need and the device lacks (`edgebench models
quantize`, once per source), then each cell as its own `edgebench run` (or `bench`)
process: its own model load and peak memory, its output under the plan folder. A cell
already done is never run again; a partial one continues with `--resume`; a failed one
is recorded and the others still run. plan-status.json is rewritten after every cell.

The child runs in a session of its own, so a Ctrl-C reaches this process only, which
passes exactly one SIGINT on and waits for the child to stop cleanly; if this process is
killed outright, the kernel sends the child SIGTERM (PR_SET_PDEATHSIG), which stops it
as cleanly, so nothing keeps running and the next `plan run` continues the cell.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import UserError
from edgebench.io import write_text_atomic
from edgebench.models.quantized import quantized_state
from edgebench.plan.cells import Cell, expand
from edgebench.plan.file import Plan
from edgebench.plan.state import (
    LOGS,
    PLAN_COPY,
    CellReport,
    PlanStatus,
    check_unchanged,
    found,
    leftover,
    new_status,
)
from edgebench.readback import check_regular, open_regular, present
from edgebench.runfolder.folder import RunLock
from edgebench.system.identity import ENV_NAME
from edgebench.system.versions import utc_now

# How a cell's process starts: `edgebench ARGS` with this interpreter. System tests point
# it at a script that runs the CLI on the fake model.
EDGEBENCH: list[str] = [sys.executable, "-m", "edgebench"]
STOP_WAIT_S = 120.0  # how long a stopped child may take to write its records
_PR_SET_PDEATHSIG = 1

Say = Callable[[str], None]
# runs `edgebench ARGS` with this environment, its output appended to the log: exit code
Launcher = Callable[[list[str], dict[str, str], Path], int]


class PlanInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, SIGHUP) stopped the plan; finished cells are kept."""

    def __init__(self, status: PlanStatus) -> None:
        super().__init__()
        self.status = status


@dataclass
class PlanRun:
    plan: Plan
    root: Path  # the plan folder (--out)
    device_name: str | None = None
    say: Say = print
    launcher: Launcher | None = None

    def run(self) -> PlanStatus:
        """Run what is not done yet; the status with every cell's outcome."""
        cells = expand(self.plan)
        self.root.mkdir(parents=True, exist_ok=True)
        lock = RunLock(self.root).acquire()  # one `plan run` per folder at a time
        try:
            check_unchanged(cells, self.root)
            copy = self.root / PLAN_COPY
            if not copy.exists() or copy.resolve() != self.plan.path.resolve():
                write_text_atomic(copy, self.plan.text)
            (self.root / LOGS).mkdir(exist_ok=True)
            name = self.device_name or os.environ.get(ENV_NAME)
            status = new_status(str(self.plan.path), name, cells, self.root)
            status.write(self.root)
            self._announce(cells, status)
            try:
                failed = self._make_variants(cells)
                for number, (cell, report) in enumerate(zip(cells, status.cells, strict=True)):
                    self._run_cell(cell, report, f"[{number + 1}/{len(cells)}]", failed)
                    status.write(self.root)
            except KeyboardInterrupt:
                status.state = "interrupted"
                status.finished_at = utc_now()
                status.write(self.root)
                raise PlanInterrupted(status) from None
            status.state, status.finished_at = "finished", utc_now()
            status.write(self.root)
            return status
        finally:
            lock.release()

    # -- the steps ----------------------------------------------------------------------
    def _announce(self, cells: Sequence[Cell], status: PlanStatus) -> None:
        done = status.counts()["done"]
        self.say(
            f"plan {self.plan.path}: {len(cells)} cells, {done} done, "
            f"{len(cells) - done} to run -> {self.root}"
        )

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.device_name is not None:
            env[ENV_NAME] = self.device_name
        return env

    def _launch(self, args: list[str], log: Path) -> int:
        return (self.launcher or launch)(args, self._env(), log)

    def _make_variants(self, cells: Sequence[Cell]) -> dict[str, str]:
        """Quantize the variants the cells still to run need and the device lacks, one
        `models quantize` per source; variant -> why it could not be made."""
        wanted: dict[str, dict[str, str]] = {}  # source -> type -> variant label
        for cell in cells:
            model = cell.model
            if model.quant_type is None or model.source is None:
                continue
            if found(cell, self.root) == "done":
                continue
            base = model.label.rpartition("@")[0]
            if quantized_state(base, model.quant_type) != "yes":
                wanted.setdefault(model.source, {})[model.quant_type] = model.label
        failed: dict[str, str] = {}
        for source, types in wanted.items():
            labels = ", ".join(types.values())
            self.say(f"quantizing {labels} (edgebench models quantize)")
            log = self.root / LOGS / f"quantize-{Path(source).stem}.log"
            args = ["models", "quantize", source, "--types", ",".join(types), "--force"]
            code = self._launch(args, log)
            for quant_type, label in types.items():
                if code != 0 or quantized_state(label.rpartition("@")[0], quant_type) != "yes":
                    failed[label] = f"edgebench models quantize failed: {last_error(log)}"
                    self.say(f"  {label}: could not be made ({failed[label]})")
        return failed

    def _run_cell(
        self, cell: Cell, report: CellReport, counter: str, failed: dict[str, str]
    ) -> None:
        state = found(cell, self.root)
        if state == "done":
            self.say(f"{counter} {cell.id}: done")
            return
        output = cell.output(self.root)
        problem = failed.get(cell.model.spec)
        stray = leftover(cell, self.root)
        if stray:
            problem = f"{output} holds {stray[0].name} but no manifest.json; remove the folder"
        if problem is not None:
            report.status, report.error = "failed", problem
            self.say(f"{counter} {cell.id}: failed ({problem})")
            return
        if state == "partial" and cell.kind == "run":
            args = ["run", "--resume", str(output), *cell.coping]
            self.say(f"{counter} {cell.id}: continuing")
        else:
            if state == "partial":  # a bench cannot resume: it starts again
                output.unlink()
            output.parent.mkdir(parents=True, exist_ok=True)
            args = [*cell.args, *cell.coping, "--out", str(output)]
            self.say(f"{counter} {cell.id}: running")
        log = self.root / LOGS / f"{cell.id}.log"
        started = time.monotonic()
        report.ran, report.error = True, "interrupted: `plan run` again continues it"
        report.exit_code = code = self._launch(args, log)
        report.wall_s = round(time.monotonic() - started, 1)
        if code == 0 and found(cell, self.root) == "done":
            report.status, report.error = "done", None
            self.say(f"{counter} {cell.id}: done in {report.wall_s:.1f} s")
        else:
            report.status, report.error = "failed", last_error(log)
            self.say(f"{counter} {cell.id}: failed (exit {code}): {report.error}")


# The end of a cell's log that its last error is looked for in: a log grows with every
# attempt, and a plan folder copied from elsewhere may hold anything under its name.
LOG_TAIL_BYTES = 1 << 20


def last_error(log: Path) -> str:
    """The cell's last `error:` line, else its last line, from the end of its log."""
    try:
        with open_regular(log, "the cell's log", sys.maxsize) as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - LOG_TAIL_BYTES))
            text = handle.read(LOG_TAIL_BYTES).decode("utf-8", errors="replace")
    except (OSError, UserError):
        return "no log"
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or ["no output"])[-1].removeprefix("error: ")


def launch(args: list[str], env: dict[str, str], log: Path) -> int:
    """`edgebench ARGS` in a process of its own, its output appended to `log`; a Ctrl-C
    here stops it cleanly (one SIGINT, then a wait) before it is raised again."""
    if present(log):  # a FIFO there would block the open for writing
        check_regular(log, "the cell's log")
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ edgebench {shlex.join(args)}\n")
        out.flush()
        parent = os.getpid()
        proc = subprocess.Popen(
            [*EDGEBENCH, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: _die_with(parent),
        )
        try:
            return proc.wait()
        except KeyboardInterrupt:
            stop(proc)
            raise


def stop(proc: subprocess.Popen[bytes]) -> None:
    """One SIGINT, as Ctrl-C; the child writes its records and exits 130. Killed only if
    it has not stopped after STOP_WAIT_S; another Ctrl-C meanwhile does not cut the wait."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_WAIT_S
    while True:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            return
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return
        except KeyboardInterrupt:
            continue


def _die_with(parent: int) -> None:
    """In the child before exec: SIGTERM when the plan process dies (Linux), and SIGINT
    handled even where this process ignores it (started in the background or under
    nohup): `stop` sends it, and an ignored signal would stay ignored across exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
