"""`edgebench fleet run`: stage what the hosts need, run the shipped playbook with
ansible-playbook (a subprocess; its events read line by line as they come), unpack each
host's fetched results into `OUT/<host>/`.

OUT/.fleet/ is the controller's working folder: the source and plan tarballs, the
variables passed to the playbook, each host's fetched tarball and ansible-playbook's own
log (its stderr and every line that is not an event).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from edgebench.errors import UserError
from edgebench.fleet.inventory import Inventory
from edgebench.fleet.payload import (
    model_files,
    onnx_variants,
    plan_members,
    read_plan_payload,
    registry_bases,
    source_checkout,
    source_members,
    write_tarball,
)
from edgebench.fleet.status import (
    COMPLETE,
    FAILED,
    NOT_STARTED,
    CellCounts,
    Fleet,
    HostState,
    count_cells,
    parse_event,
)
from edgebench.fleet.unpack import UNPACK_ERRORS, Refused, unpack_results
from edgebench.io import write_json_atomic
from edgebench.models.onnx_model import RUNTIME as ONNX_RUNTIME
from edgebench.runtimes import RUNTIMES

PACKAGE = Path(__file__).parent
PLAYBOOK = PACKAGE / "playbook.yml"
CALLBACKS = PACKAGE / "callback"
WORK = ".fleet"
INSTALL_HINT = (
    "ansible-playbook not found: install Ansible on this machine with "
    "pip install 'edgebench[fleet]' (or ./install.sh fleet); the hosts need only ssh and python3"
)


@dataclass(frozen=True)
class HostResult:
    state: HostState
    cells: CellCounts
    folder: Path | None  # OUT/<host>, when results were fetched (now or before)


def find_playbook_command() -> Path:
    """ansible-playbook beside this Python (the venv edgebench runs in), else on PATH."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    if beside.is_file():
        return beside
    found = shutil.which("ansible-playbook")
    if not found:
        raise UserError(INSTALL_HINT)
    return Path(found)


def stage(
    plan: Path, out: Path, *, push_models: bool, say: Callable[[str], None] = print
) -> dict[str, object]:
    """Write the tarballs into OUT/.fleet and return the playbook's fleet_* variables."""
    payload = read_plan_payload(plan)
    pushed = model_files(payload.models) if push_models else []
    onnx = onnx_variants(payload.models)
    if onnx and not push_models:
        say(unconverted_warning(onnx))
    work = out / WORK
    source = write_tarball(source_members(source_checkout()), work / "source.tar.gz")
    plan_tar = write_tarball(plan_members(payload), work / "plan.tar.gz")
    return {
        "fleet_source_tarball": str(source.path.resolve()),
        "fleet_source_sha256": source.sha256,
        "fleet_plan_tarball": str(plan_tar.path.resolve()),
        "fleet_plan_name": plan.name,
        "fleet_push_models": [[relative, str(path.resolve())] for relative, path in pushed],
        "fleet_pull_models": [] if push_models else registry_bases(payload.models),
        # ONNX models need their runtime's extra on top of install.sh's default.
        "fleet_install_extras": (RUNTIMES[ONNX_RUNTIME].install_extra or "") if onnx else "",
        "fleet_incoming": str((work / "incoming").resolve()),
    }


def unconverted_warning(onnx: list[str]) -> str:
    """Without --push-models: a host has an ONNX model only if it was converted there."""
    return (
        f"warning: hosts do not convert {', '.join(onnx)} (plan run never does): their cells "
        "fail on a host without them; --push-models copies them from this machine"
    )


def run_fleet(
    plan: Path,
    inventory: Inventory,
    out: Path,
    *,
    push_models: bool = False,
    say: Callable[[str], None] = print,
) -> dict[str, HostResult]:
    """Run the plan on every host of the inventory; each host's result. Hosts that fail
    are in the result with why; this raises only for the user's mistakes."""
    command = find_playbook_command()
    variables = stage(plan, out, push_models=push_models, say=say)  # makes OUT/.fleet
    say(f"fleet: {len(inventory.hosts)} host(s): {', '.join(inventory.hosts)}")
    work = out / WORK
    incoming = Path(str(variables["fleet_incoming"]))
    shutil.rmtree(incoming, ignore_errors=True)  # only this run's fetches count
    incoming.mkdir(parents=True)
    write_json_atomic(work / "vars.json", variables)
    argv = [
        str(command),
        "-i",
        str(inventory.path),
        "--forks",
        str(max(5, len(inventory.hosts))),
        "--extra-vars",
        f"@{work / 'vars.json'}",
        str(PLAYBOOK),
    ]
    fleet = Fleet({host: HostState(host) for host in inventory.hosts})
    # This run's own ssh control sockets (a short path: a socket path is at most 107
    # bytes), so its persistent connections can be closed when it ends.
    control = Path(tempfile.mkdtemp(prefix="edgebench-ssh-"))
    with (work / "ansible.log").open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=playbook_env(os.environ, control),
        )
        assert process.stdout is not None
        try:
            for line in process.stdout:
                event = parse_event(line)
                if event is None:
                    log.write(line)
                    continue
                status = fleet.apply(event)
                if status:
                    say(status)
        finally:  # Ctrl-C, SIGTERM: Ansible ends too, and its connections with it
            if process.poll() is None:
                process.terminate()
            process.wait()
            close_connections(control)
    return {host: _collect(fleet.hosts[host], incoming, out, work) for host in inventory.hosts}


def playbook_env(
    environ: os._Environ[str] | dict[str, str], control: Path | None = None
) -> dict[str, str]:
    """ansible-playbook's environment: the edgebench_status callback on stdout, no
    retry files or cows, the host keys as the user's ssh config says, and the ssh
    control sockets (Ansible's persistent connections) in `control` when given."""
    env = dict(environ)
    if control is not None:
        env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = str(control)
    env.update(
        {
            "ANSIBLE_STDOUT_CALLBACK": "edgebench_status",
            "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS),
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_NOCOWS": "1",
            "ANSIBLE_PYTHON_INTERPRETER": env.get("ANSIBLE_PYTHON_INTERPRETER", "auto_silent"),
            "ANSIBLE_FORCE_COLOR": "0",
        }
    )
    return env


def close_connections(control: Path) -> None:
    """Close every persistent ssh connection of this run and remove its socket folder.
    Ansible leaves each master open for ControlPersist (60 s) after its last task, and
    with it an idle sshd session on the device: nothing of the run stays on a device."""
    for socket in sorted(control.iterdir()) if control.is_dir() else []:
        subprocess.run(
            ["ssh", "-o", f"ControlPath={socket}", "-O", "exit", "edgebench-fleet-host"],
            capture_output=True,
            timeout=15,
            check=False,
        )
    shutil.rmtree(control, ignore_errors=True)


def _collect(state: HostState, incoming: Path, out: Path, work: Path) -> HostResult:
    """A host's results unpacked into OUT/<host> (replacing the older copy only when the
    new one is complete and valid) and counted."""
    if state.state == NOT_STARTED:
        state = replace(
            state,
            state=FAILED,
            reason=f"ansible-playbook ended before this host started (see {work / 'ansible.log'})",
        )
    tarball = incoming / f"{state.host}.tar.gz"
    folder = out / state.host
    unpacked = True
    if tarball.is_file():
        try:
            unpack_results(tarball, folder)
        except (Refused, *UNPACK_ERRORS) as exc:
            kept = "; the results fetched before are kept" if folder.is_dir() else ""
            reason = f"its results could not be unpacked ({_why(exc)}){kept}"
            state = replace(state, state=FAILED, reason=reason)
            unpacked = False
    if not folder.is_dir():
        return HostResult(state, CellCounts(0, 0, None), None)
    cells = count_cells(folder)
    # a host's hostile or torn status: that host failed (a refused tarball's reason stays:
    # the status read is then the older copy's)
    if cells.problem is not None and unpacked:
        state = replace(state, state=FAILED, reason=f"its results cannot be read: {cells.problem}")
    elif state.state == COMPLETE and cells.failed:
        state = replace(state, state=FAILED, reason=f"{cells.failed} cell(s) failed")
    return HostResult(state, cells, folder)


def _why(exc: BaseException) -> str:
    """The reason on one line (tarfile lists each compression it tried on lines of their
    own: a file that is none of them is not a tarball)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    text = str(exc) or type(exc).__name__
    if isinstance(exc, tarfile.ReadError) and "could not be opened successfully" in text:
        return "not a tarball"
    return " ".join(text.split())
