"""Heat and clocks now, for a timeline sampled once a second: the CPU temperature, each
core's current frequency and, on a Raspberry Pi, the firmware's throttling flags.

Files first (a thermal zone, cpufreq, the firmware driver's get_throttled): reading one
costs microseconds; `vcgencmd` (a process start) only where no file says it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from edgebench.system.device import (
    CommandRunner,
    cpu_temperature,
    is_raspberry_pi,
    machine,
    throttle_events,
    throttling,
)
from edgebench.system.tree import SystemTree

_CPU = re.compile(r"cpu[0-9]+\Z")  # ASCII digits: "cpu²".isdigit() is true, int() refuses it
_TEMP = re.compile(r"temp=(?P<celsius>[-+0-9.]+)'C")  # vcgencmd measure_temp: "temp=51.6'C"


def core_frequencies(tree: SystemTree) -> list[int | None]:
    """Each CPU's current clock (MHz) in CPU order; None for one without cpufreq."""
    cpus = [path for path in tree.glob("sys/devices/system/cpu/cpu[0-9]*") if _CPU.match(path.name)]
    freqs: list[int | None] = []
    for cpu in sorted(cpus, key=lambda path: int(path.name[3:])):
        khz = tree.number(tree.relative(cpu / "cpufreq/scaling_cur_freq"))
        freqs.append(round(khz / 1000) if khz else None)
    return freqs


def vcgencmd_temperature(runner: CommandRunner | None) -> float | None:
    """`vcgencmd measure_temp`'s °C; None when it prints no such number ("temp=--'C")."""
    out = runner(["vcgencmd", "measure_temp"]) if runner is not None else None
    match = _TEMP.search(out or "")
    try:
        celsius = float(match["celsius"]) if match else None
    except ValueError:
        return None
    return celsius if celsius is not None and math.isfinite(celsius) else None


def heat_sample(tree: SystemTree | None = None, runner: CommandRunner | None = None) -> dict:
    """{"temp_c", "temp_source", "freq_mhz" (per core), "throttled" (the Pi's decoded
    flags with their "now" and "since_boot" events in words, else None)}. No tree: this
    machine, with vcgencmd asked on a Raspberry Pi only."""
    tree, runner = machine(tree, runner)
    if not is_raspberry_pi(tree):
        runner = None
    temp, source = cpu_temperature(tree)
    if temp is None:
        temp = vcgencmd_temperature(runner)
        source = "vcgencmd measure_temp" if temp is not None else None
    flags: dict[str, Any] | None = throttling(tree, runner, files_first=True)
    return {
        "temp_c": temp,
        "temp_source": source,
        "freq_mhz": core_frequencies(tree),
        "throttled": {**flags, **throttle_events(flags)} if flags else None,
    }
