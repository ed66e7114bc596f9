"""A laptop's battery fuel gauge (/sys/class/power_supply/<BAT>/), while it discharges.

Discharging, the battery feeds the whole machine, so its output is the system's power.
On AC the adapter feeds the machine and the gauge measures the charging current, not the
system: no reading then (a reading taken after the plug goes in is a gap).
"""

from __future__ import annotations

import time

from edgebench.system.device import CommandRunner
from edgebench.system.power.sample import PowerSample, Probe
from edgebench.system.tree import SystemTree


class BatterySource:
    tier = "battery"
    resolution = (
        "the fuel gauge's power (µW) or current x voltage (µA x µV), averaged by the gauge "
        "over seconds and refreshed every few seconds"
    )
    covers = (
        "the whole machine as the battery feeds it (CPU, memory, screen, disks, radios, "
        "fans, USB devices), only while discharging"
    )

    def __init__(self, tree: SystemTree, supply: str) -> None:
        self.tree = tree
        self.supply = supply  # "sys/class/power_supply/BAT0"
        self.name = f"battery:{supply.rsplit('/', 1)[-1]}"

    def read(self) -> PowerSample | None:
        if self.tree.text(f"{self.supply}/status") != "Discharging":
            return None
        watts = battery_watts(self.tree, self.supply)
        return PowerSample(t=time.time(), watts=watts, joules=None) if watts is not None else None


def battery_watts(tree: SystemTree, supply: str) -> float | None:
    """power_now, else current_now x voltage_now; some gauges sign the current when
    discharging, so the magnitude is taken."""
    micro_watts = tree.number(f"{supply}/power_now")
    if micro_watts is not None:
        return abs(micro_watts) / 1e6
    micro_amps = tree.number(f"{supply}/current_now")
    micro_volts = tree.number(f"{supply}/voltage_now")
    if micro_amps is None or micro_volts is None:
        return None
    return abs(micro_amps) * micro_volts / 1e12


def probe(tree: SystemTree, runner: CommandRunner | None = None) -> Probe:
    states = []
    for path in tree.glob("sys/class/power_supply/*"):
        supply = tree.relative(path)
        # scope "Device": a mouse's or a headset's battery, not the machine's
        if tree.text(f"{supply}/type") != "Battery" or tree.text(f"{supply}/scope") == "Device":
            continue
        status = tree.text(f"{supply}/status") or "no status"
        if status == "Discharging":
            if battery_watts(tree, supply) is None:
                states.append(f"{path.name} discharging without power_now or current_now")
                continue
            return BatterySource(tree, supply), ""
        states.append(f"{path.name} {status}")
    if not states:
        return None, "no battery"
    return None, (
        f"battery {', '.join(states)} (only a discharging battery measures the system; "
        "on AC it does not)"
    )
