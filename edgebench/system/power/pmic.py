"""Raspberry Pi 5: the power management IC's rail readings (`vcgencmd pmic_read_adc`).

The PMIC reports the voltage and the current of 12 rails it supplies; the board's power
is the sum of volts x amps over the rails that have both (EXT5V_V, the 5 V input, and
BATT_V, the RTC cell, have no current). No correction is applied: the sum is what the
rails draw, below what the USB-C input delivers (docs/energy.md says by how much).
Older boards (Pi 4 and before) have no such ADC: no current sensing at all.
"""

from __future__ import annotations

import re
import time

from edgebench.system.device import CommandRunner, board_model
from edgebench.system.power.sample import PowerSample, Probe
from edgebench.system.tree import SystemTree

_COMMAND = ["vcgencmd", "pmic_read_adc"]
# "  VDD_CORE_A current(7)=2.18123000A" and "  VDD_CORE_V volt(15)=0.87244500V"
_READING = re.compile(
    r"^\s*(?P<rail>\S+)_(?P<unit>[AV])\s+(?:current|volt)\(\d+\)=(?P<value>[-+0-9.eE]+)[AV]\s*$"
)
# The boards with this PMIC: Pi 5, Pi 500, Compute Module 5.
_PMIC_BOARDS = ("raspberry pi 5", "raspberry pi 500", "compute module 5")


def rail_watts(text: str) -> dict[str, float]:
    """Watts per rail: volts x amps of each rail the output gives both for."""
    amps: dict[str, float] = {}
    volts: dict[str, float] = {}
    for line in text.splitlines():
        match = _READING.match(line)
        if match:
            try:
                value = float(match["value"])
            except ValueError:
                continue
            (amps if match["unit"] == "A" else volts)[match["rail"]] = value
    return {rail: volts[rail] * amps[rail] for rail in sorted(amps.keys() & volts.keys())}


class PmicSource:
    name = "pi5-pmic"
    tier = "board-pmic"
    resolution = (
        "one instantaneous voltage and current reading per rail per poll (no energy "
        "counter: power between polls is interpolated; single readings are noisy)"
    )

    def __init__(self, runner: CommandRunner, rails: list[str]) -> None:
        self.runner = runner
        self.rails = rails
        self.covers = (
            f"the sum of V x A over the PMIC's {len(rails)} rails ({', '.join(rails)}), "
            "no correction applied; misses the 5 V load (USB devices, HATs, NVMe, fan) "
            "and the PMIC's own conversion losses, so it reads below the USB-C input"
        )

    def read(self) -> PowerSample | None:
        out = self.runner(_COMMAND)
        watts = rail_watts(out) if out else {}
        if not watts:
            return None
        return PowerSample(t=time.time(), watts=sum(watts.values()), joules=None)


def probe(tree: SystemTree, runner: CommandRunner | None) -> Probe:
    board = board_model(tree) or ""
    if not any(name in board.lower() for name in _PMIC_BOARDS):
        if "raspberry pi" in board.lower():
            return None, f"{board}: no current sensing (only the Pi 5's PMIC measures its rails)"
        return None, "not a Raspberry Pi 5"
    out = runner(_COMMAND) if runner is not None else None
    watts = rail_watts(out) if out else {}
    if runner is None or not watts:
        return None, (
            f"{board}: `vcgencmd pmic_read_adc` gave no rail readings "
            "(is vcgencmd installed and the user in the video group?)"
        )
    return PmicSource(runner, list(watts)), ""
