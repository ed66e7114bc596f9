"""Which power source a run polls: the user's meter first, else the best one this machine
has, tier by tier; when none is readable, why, one clause per tier tried."""

from __future__ import annotations

from pathlib import Path

from edgebench.errors import UserError
from edgebench.system.device import CommandRunner, machine
from edgebench.system.power import battery, hwmon, pmic, rapl
from edgebench.system.power.command import check_power_command
from edgebench.system.power.sample import PowerChoice
from edgebench.system.tree import SystemTree

# Most complete first: the Pi 5's board rails, the CPU's counters, the battery (the
# whole machine, but averaged over seconds), then whatever hwmon chip reports power.
_TIERS = (pmic.probe, rapl.probe, battery.probe, hwmon.probe)


def choose_power_source(
    tree: SystemTree | None = None,
    runner: CommandRunner | None = None,
    command: str | None = None,
    log: Path | None = None,
) -> PowerChoice:
    """--power-log, else --power-command (run once to prove it prints watts: UserError
    otherwise), else the first readable tier. No tree: this machine and its commands."""
    if log is not None and command is not None:
        raise UserError("--power-log and --power-command both given: one meter, one option")
    if log is not None:
        return PowerChoice(source=None, log=Path(log), reason=None)
    if command is not None:
        return PowerChoice(source=check_power_command(command), log=None, reason=None)
    tree, runner = machine(tree, runner)
    reasons = []
    for probe in _TIERS:
        source, reason = probe(tree, runner)
        if source is not None:
            return PowerChoice(source=source, log=None, reason=None)
        reasons.append(reason)
    return PowerChoice(source=None, log=None, reason="; ".join(reasons))
