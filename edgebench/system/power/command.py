"""An external meter polled through `--power-command CMD`: CMD runs in the shell at each
poll and prints the watts (a USB meter's or smart plug's reader, `jq .power` of a
plug's HTTP status ...). The first number of its output is the reading; a "mW" or "kW"
right after it is honoured."""

from __future__ import annotations

import math
import re
import subprocess
import time

from edgebench.errors import UserError
from edgebench.system.power.sample import PowerSample

_TIMEOUT_S = 5.0
_NUMBER = re.compile(r"(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[mk]?W\b)?")
_SCALE = {"mW": 1e-3, "kW": 1e3}
METER_COVERS = (
    "whatever the meter is wired to: a wall plug meter sees the whole machine with its "
    "power supply's losses (and all else on that socket), a USB meter everything behind "
    "its port"
)


def parse_watts(text: str) -> float | None:
    """The first number of `text` in watts; None when there is none."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    return float(match["value"]) * _SCALE.get(match["unit"] or "W", 1.0)


class CommandSource:
    name = "command"
    tier = "external"
    resolution = "the meter's own reading, one per poll (each poll runs the command)"
    covers = METER_COVERS

    def __init__(self, command: str, timeout: float = _TIMEOUT_S) -> None:
        self.command = command
        self.timeout = timeout

    def run(self) -> float:
        """One reading in watts; UserError naming the command and what went wrong."""
        where = f"--power-command {self.command!r}"
        try:
            done = subprocess.run(
                self.command,
                shell=True,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise UserError(f"{where} did not finish within {self.timeout:g} s") from None
        except OSError as err:
            raise UserError(f"{where} could not start: {err.strerror}") from None
        if done.returncode != 0:
            said = _last_line(done.stderr) or _last_line(done.stdout) or "no message"
            raise UserError(f"{where} failed (exit {done.returncode}): {said}")
        watts = parse_watts(done.stdout)
        if watts is None:
            shown = _last_line(done.stdout)[:80]
            said = f"it printed {shown!r}" if shown else "it printed nothing"
            raise UserError(f"{where} printed no number of watts ({said})")
        if not math.isfinite(watts) or watts < 0:
            raise UserError(f"{where} printed {watts:g} W: watts must be a number >= 0")
        return watts

    def read(self) -> PowerSample | None:
        start = time.time()
        try:
            watts = self.run()
        except UserError:
            return None
        # the meter's reading belongs to the moment the command ran, not when it ended
        return PowerSample(t=(start + time.time()) / 2, watts=watts, joules=None)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def check_power_command(command: str) -> CommandSource:
    """The source for `--power-command`, after one reading proves the command works."""
    if not command.strip():
        raise UserError("--power-command is empty: give a command that prints watts")
    source = CommandSource(command)
    source.run()
    return source
