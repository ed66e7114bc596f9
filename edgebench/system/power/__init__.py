"""Power and energy: one module per tier of power source (pmic: the Raspberry Pi 5's
board rails, rapl: the CPU's energy counters, battery: a laptop's fuel gauge, hwmon:
sensor chips, command and meter_log: an external meter), the choice between them
(choose), and joules over an interval from their samples (energy). docs/energy.md says
what each tier measures and misses."""

from edgebench.system.power.choose import choose_power_source
from edgebench.system.power.energy import PowerCurve, energy_between
from edgebench.system.power.meter_log import PowerLogInfo, describe_power_log, read_power_log
from edgebench.system.power.sample import PowerChoice, PowerSample, PowerSource, ReadingLost

__all__ = [
    "PowerChoice",
    "PowerCurve",
    "PowerLogInfo",
    "PowerSample",
    "PowerSource",
    "ReadingLost",
    "choose_power_source",
    "describe_power_log",
    "energy_between",
    "read_power_log",
]
