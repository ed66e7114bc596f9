"""hwmon power and energy sensors (/sys/class/hwmon/hwmon*/power*_input, energy*_input):
what they measure depends on the chip (amd_energy: the CPU's cores and sockets; an
INA219/INA226 shunt monitor: whatever rail it is wired into). GPU drivers' sensors
measure the GPU only and are not taken for a CPU benchmark.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from edgebench.system.device import CommandRunner
from edgebench.system.power.sample import EnergyCounter, PowerSample, Probe, read_counters
from edgebench.system.tree import SystemTree

_GPU_CHIPS = ("amdgpu", "radeon", "nouveau", "i915", "xe")
# Labels that name the whole (a socket's energy, the package) beside its parts (cores):
# when a chip has them only they are summed, never both.
_WHOLE = re.compile(r"socket|package|pkg|total|system|sys\b|input|\bpin\b", re.IGNORECASE)


@dataclass
class Sensor:
    path: str  # relative: "sys/class/hwmon/hwmon2/energy17_input"
    label: str
    counter: EnergyCounter | None  # energy sensors; None for power sensors


class HwmonSource:
    tier = "hwmon"

    def __init__(self, tree: SystemTree, chip: str, sensors: list[Sensor]) -> None:
        self.tree = tree
        self.sensors = sensors
        self.name = f"hwmon:{chip}"
        energy = sensors[0].counter is not None
        self.resolution = (
            "cumulative energy counters in µJ" if energy else "instantaneous power in µW"
        ) + " as the chip's driver reports them"
        labels = ", ".join(sensor.label for sensor in sensors)
        self.covers = (
            f"the sum of {chip}'s sensors {labels}: what that chip measures (its datasheet "
            "and wiring say which rail); the rest of the machine is not seen"
        )

    def read(self) -> PowerSample | None:
        counters = [(s.path, s.counter) for s in self.sensors if s.counter is not None]
        if counters:
            return read_counters(self.tree, counters)
        try:
            micro_watts = sum(int(self.tree.read(sensor.path)) for sensor in self.sensors)
            watts = micro_watts / 1e6
        except (OSError, ValueError, OverflowError):  # OverflowError: a number past a float
            return None
        return PowerSample(t=time.time(), watts=watts, joules=None)


def _sensors(tree: SystemTree, chip_dir: str, kind: str) -> list[Sensor]:
    """The chip's readings of `kind` ("energy" or "power"): the whole-labelled ones when
    there are such, else all."""
    found = []
    for path in tree.glob(f"{chip_dir}/{kind}[0-9]*_input"):
        stem = path.name.removesuffix("_input")
        label = tree.text(f"{chip_dir}/{stem}_label") or stem
        counter = EnergyCounter(None) if kind == "energy" else None
        found.append(Sensor(tree.relative(path), label, counter))
    whole = [sensor for sensor in found if _WHOLE.search(sensor.label)]
    return whole or found


def probe(tree: SystemTree, runner: CommandRunner | None = None) -> Probe:
    skipped = []
    for chip_path in tree.glob("sys/class/hwmon/hwmon*"):
        chip_dir = tree.relative(chip_path)
        chip = tree.text(f"{chip_dir}/name") or chip_path.name
        sensors = _sensors(tree, chip_dir, "energy") or _sensors(tree, chip_dir, "power")
        if not sensors:
            continue
        if chip in _GPU_CHIPS:
            skipped.append(f"{chip} measures a GPU only")
            continue
        try:
            raws = [int(tree.read(sensor.path)) for sensor in sensors]
        except PermissionError:
            skipped.append(f"/{sensors[0].path} is root-only (permission denied)")
            continue
        except (OSError, ValueError):
            skipped.append(f"/{sensors[0].path} unreadable")
            continue
        for sensor, raw in zip(sensors, raws, strict=True):
            if sensor.counter is not None:
                sensor.counter.update(raw)
        return HwmonSource(tree, chip, sensors), ""
    return None, "hwmon: " + ", ".join(skipped) if skipped else "no hwmon power sensor"
