"""RAPL: the CPU's own energy counters under /sys/class/powercap (Intel, and AMD since
Zen through the same driver). Package and DRAM domains only: "core" and "uncore" are
parts of the package, "psys" (the platform) is not on every machine.

Since Linux 5.10 energy_uj is readable by root only (a power side channel,
CVE-2020-8694); the probe says so, naming the file, instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edgebench.system.device import CommandRunner
from edgebench.system.power.sample import EnergyCounter, PowerSample, Probe, read_counters
from edgebench.system.tree import SystemTree


@dataclass
class RaplDomain:
    name: str  # "package-0", "dram"
    energy_path: str  # relative to the tree's root
    counter: EnergyCounter


class RaplSource:
    name = "rapl"
    tier = "rapl"
    resolution = (
        "cumulative energy counters in µJ (hardware unit about 61 µJ on Intel, 15 µJ on "
        "AMD, updated about every millisecond); wrap-around corrected"
    )

    def __init__(self, tree: SystemTree, domains: list[RaplDomain]) -> None:
        self.tree = tree
        self.domains = domains
        names = ", ".join(domain.name for domain in domains)
        self.covers = (
            f"the CPU package and DRAM domains ({names}): cores, caches, memory controller "
            "and (where reported) DRAM; misses the rest of the board, the PSU's losses, "
            "fans, disks and the screen"
        )

    def read(self) -> PowerSample | None:
        return read_counters(self.tree, [(d.energy_path, d.counter) for d in self.domains])


def _zones(tree: SystemTree) -> list[tuple[Path, str]]:
    """(zone, name) of each package and DRAM zone. A package the MMIO interface reports
    too ("intel-rapl-mmio:0") is the MSR one's twin: counted once."""
    zones: dict[tuple[str, str], Path] = {}
    for pattern in ("intel-rapl:*", "intel-rapl-mmio:*"):
        for zone in tree.glob(f"sys/class/powercap/{pattern}"):
            name = tree.text(tree.relative(zone / "name")) or ""
            package = zone.name.split(":")[1]  # intel-rapl:0:2 is a domain of package 0
            if (name.startswith("package-") or name == "dram") and (package, name) not in zones:
                zones[package, name] = zone
    ordered = sorted(zones.items(), key=lambda item: (item[0][0], item[0][1] == "dram"))
    return [(zone, name) for (_, name), zone in ordered]


def probe(tree: SystemTree, runner: CommandRunner | None = None) -> Probe:
    zones = _zones(tree)
    if not zones:
        return None, "RAPL: no /sys/class/powercap/intel-rapl* package zone"
    domains = []
    for zone, name in zones:
        path = tree.relative(zone / "energy_uj")
        try:
            raw = int(tree.read(path))
            wrap = int(tree.read(tree.relative(zone / "max_energy_range_uj")))
        except PermissionError:
            return None, f"RAPL: /{path} is root-only since Linux 5.10 (permission denied)"
        except (OSError, ValueError) as err:
            why = err.strerror if isinstance(err, OSError) else "not a number"
            return None, f"RAPL: /{path} or its max_energy_range_uj unreadable ({why})"
        counter = EnergyCounter(wrap)
        counter.update(raw)
        domains.append(RaplDomain(name, path, counter))
    return RaplSource(tree, domains), ""
