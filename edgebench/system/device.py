"""The `device` block: the machine the numbers belong to, read from /proc and /sys.

Every fact comes from a file the kernel or firmware writes (or, for the Raspberry Pi
throttling state, from `vcgencmd`); a fact that is not there is None, never guessed.
The root is configurable so tests read fake trees of a Raspberry Pi 5 and a laptop.
Facts of this process (Python, the CPUs it may run on) come from the interpreter and
are only filled for the real root.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgebench.system.bounded_command import run_bounded
from edgebench.system.build_flags import arm_cpuinfo, installed_build
from edgebench.system.identity import read_identity
from edgebench.system.records import Device, DeviceIdentity
from edgebench.system.tree import ROOT, SystemTree, parse_cpuinfo

_MB = 1024 * 1024
_DMI_PRODUCT = "sys/class/dmi/id/product_name"

# ARM "CPU part" numbers (implementer 0x41) of the cores found in single-board
# computers and phones, as the kernel reports them and lscpu names them.
_ARM_PARTS = {
    "0xd03": "Cortex-A53",
    "0xd04": "Cortex-A35",
    "0xd05": "Cortex-A55",
    "0xd07": "Cortex-A57",
    "0xd08": "Cortex-A72",
    "0xd09": "Cortex-A73",
    "0xd0a": "Cortex-A75",
    "0xd0b": "Cortex-A76",
    "0xd0c": "Neoverse-N1",
    "0xd0d": "Cortex-A77",
    "0xd40": "Neoverse-V1",
    "0xd41": "Cortex-A78",
    "0xd44": "Cortex-X1",
    "0xd46": "Cortex-A510",
    "0xd47": "Cortex-A710",
    "0xd48": "Cortex-X2",
    "0xd49": "Neoverse-N2",
    "0xd4d": "Cortex-A715",
    "0xd4e": "Cortex-X3",
    "0xd80": "Cortex-A520",
    "0xd81": "Cortex-A720",
    "0xd82": "Cortex-X4",
}
_ARM_IMPLEMENTERS = {"0x41": "ARM", "0x51": "Qualcomm", "0x61": "Apple", "0x48": "HiSilicon"}

# CPU features llama.cpp and ONNX Runtime kernels use, as /proc/cpuinfo spells them
# (x86 `flags`, ARM `Features`).
SIMD_FLAGS = (
    "sse3",
    "ssse3",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx_vnni",
    "avx512f",
    "avx512bw",
    "avx512vbmi",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "asimd",
    "asimdhp",
    "asimddp",
    "i8mm",
    "bf16",
    "sve",
    "sve2",
)

_FLAG_ALIASES = {"pni": "sse3"}  # x86 kernels call SSE3 "pni"

# Thermal zone types that measure the CPU or SoC, most specific first.
_CPU_THERMAL_TYPES = (
    "cpu-thermal",
    "cpu_thermal",
    "soc-thermal",
    "soc_thermal",
    "x86_pkg_temp",
    "cpu0-thermal",
)
_CPU_HWMON_NAMES = ("coretemp", "k10temp", "cpu_thermal", "zenpower")

# `vcgencmd get_throttled` bits (Raspberry Pi firmware documentation).
_THROTTLE_BITS = {
    "under_voltage_now": 0,
    "freq_capped_now": 1,
    "throttled_now": 2,
    "soft_temp_limit_now": 3,
    "under_voltage_occurred": 16,
    "freq_capped_occurred": 17,
    "throttled_occurred": 18,
    "soft_temp_limit_occurred": 19,
}

# The same events in words, as `throttle_events` lists them.
THROTTLE_WORDS = {
    "under_voltage": "under-voltage",
    "freq_capped": "arm frequency capped",
    "throttled": "throttled",
    "soft_temp_limit": "soft temperature limit",
}

CommandRunner = Callable[[list[str]], str | None]


def run_command(argv: list[str]) -> str | None:
    """stdout of a short command, or None when it is missing or fails."""
    if shutil.which(argv[0]) is None:
        return None
    try:  # its own process group, bounded output: a hung or forking tool costs 5 s
        done = run_bounded(argv, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace").strip()


# -- CPU ---------------------------------------------------------------------------
def cpuinfo_text(tree: SystemTree, machine: str | None = None) -> str:
    """/proc/cpuinfo; on an ARM machine without its `Features` line (qemu-user shows the
    host's) the aux vector's, as the kernel would list them (build_flags.arm_cpuinfo)."""
    text = tree.text("proc/cpuinfo") or ""
    machine = machine or tree.text("proc/sys/kernel/arch") or ""
    try:
        auxv = (tree.root / "proc/self/auxv").read_bytes()
    except OSError:
        auxv = None
    return arm_cpuinfo(text, machine, auxv)


def _first(blocks: list[dict[str, str]], *keys: str) -> str | None:
    for block in blocks:
        for key in keys:
            if block.get(key):
                return block[key]
    return None


def cpu_facts(tree: SystemTree, machine: str | None = None) -> dict[str, Any]:
    """`machine`: `uname -m` of this process, where its /proc may be another CPU's."""
    blocks = parse_cpuinfo(cpuinfo_text(tree, machine))
    model = _first(blocks, "model name", "cpu model")
    vendor = _first(blocks, "vendor_id")
    implementer = _first(blocks, "cpu implementer")
    if implementer is not None:
        vendor = vendor or _ARM_IMPLEMENTERS.get(implementer.lower())
        part = _first(blocks, "cpu part")
        if model is None and implementer.lower() == "0x41" and part:
            model = _ARM_PARTS.get(part.lower())
    model = model or _first(blocks, "hardware")  # 32-bit ARM kernels: the SoC name
    flags_text = _first(blocks, "flags", "features")
    flags = flags_text.split() if flags_text else None
    known = {_FLAG_ALIASES.get(f, f) for f in flags} if flags is not None else set()
    processors = sum(1 for block in blocks if "processor" in block and block["processor"].isdigit())
    return {
        "cpu_model": model,
        "cpu_vendor": vendor,
        "cpu_flags": flags,
        "cpu_simd": [f for f in SIMD_FLAGS if f in known] if flags is not None else None,
        "hypervisor": ("hypervisor" in flags) if flags and vendor in _X86_VENDORS else None,
        "logical_cores": _count_cpu_list(tree.text("sys/devices/system/cpu/online"))
        or processors
        or None,
        "physical_cores": _physical_cores(tree),
    }


_X86_VENDORS = ("GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls")


def _count_cpu_list(text: str | None) -> int | None:
    """'0-3,6' -> 5."""
    if not text:
        return None
    count = 0
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            count += int(high or low) - int(low) + 1
    except ValueError:
        return None
    return count


def _physical_cores(tree: SystemTree) -> int | None:
    """Distinct (package, core) pairs in the CPU topology; hyper-threads share one."""
    cores = set()
    for topology in tree.glob("sys/devices/system/cpu/cpu[0-9]*/topology"):
        package = tree.text(tree.relative(topology / "physical_package_id"))
        core = tree.text(tree.relative(topology / "core_id"))
        if core is None:
            return None
        cores.add((package, core))
    return len(cores) or None


def frequency_facts(tree: SystemTree) -> dict[str, Any]:
    governors = {
        tree.text(tree.relative(p))
        for p in tree.glob("sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
    }
    governors.discard(None)
    max_khz = tree.number(_CPUFREQ + "cpuinfo_max_freq")
    return {
        "governor": ",".join(sorted(g for g in governors if g)) or None,
        "cpu_max_mhz": round(max_khz / 1000) if max_khz else None,
    }


_CPUFREQ = "sys/devices/system/cpu/cpu0/cpufreq/"


# -- memory and system ------------------------------------------------------------
def memory_facts(tree: SystemTree) -> dict[str, Any]:
    values: dict[str, int] = {}
    for line in (tree.text("proc/meminfo") or "").splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[key] = int(parts[0]) * 1024  # kB

    def mb(key: str) -> int | None:
        return round(values[key] / _MB) if key in values else None

    return {
        "ram_total_mb": mb("MemTotal"),
        "ram_available_mb": mb("MemAvailable"),
        "swap_total_mb": mb("SwapTotal"),
    }


def os_facts(tree: SystemTree) -> dict[str, Any]:
    pretty = None
    for line in (tree.text("etc/os-release") or "").splitlines():
        key, _, value = line.partition("=")
        if key == "PRETTY_NAME":
            pretty = value.strip().strip('"') or None
    return {
        "os": pretty,
        "kernel": tree.text("proc/sys/kernel/osrelease"),
        "machine": tree.text("proc/sys/kernel/arch"),
    }


def board_model(tree: SystemTree) -> str | None:
    """The device tree's model (Raspberry Pi and other boards), else the DMI vendor
    and product name (PCs and laptops)."""
    for path in ("proc/device-tree/model", "sys/firmware/devicetree/base/model"):
        text = tree.text(path)
        if text:
            return text.rstrip("\x00").strip() or None
    vendor = tree.text("sys/class/dmi/id/sys_vendor")
    product = tree.text(_DMI_PRODUCT)
    named = " ".join(part for part in (vendor, product) if part)
    return named or None


def power_source(tree: SystemTree) -> str | None:
    """'ac' or 'battery' when the machine reports a mains adapter, else None."""
    for supply in tree.glob("sys/class/power_supply/*"):
        if tree.text(tree.relative(supply / "type")) == "Mains":
            online = tree.text(tree.relative(supply / "online"))
            if online in ("0", "1"):
                return "ac" if online == "1" else "battery"
    return None


# -- temperature and throttling ---------------------------------------------------
def cpu_temperature(tree: SystemTree) -> tuple[float | None, str | None]:
    """(°C, where it was read) from a CPU/SoC thermal zone, else a CPU hwmon sensor."""
    zones = {}
    for zone in tree.glob("sys/class/thermal/thermal_zone*"):
        kind = tree.text(tree.relative(zone / "type"))
        millis = tree.number(tree.relative(zone / "temp"))
        if kind and millis is not None:
            zones.setdefault(kind, (millis, zone.name))
    for kind in _CPU_THERMAL_TYPES:
        if kind in zones:
            millis, name = zones[kind]
            return millis / 1000, f"{name} ({kind})"
    for hwmon in tree.glob("sys/class/hwmon/hwmon*"):
        name = tree.text(tree.relative(hwmon / "name"))
        if name in _CPU_HWMON_NAMES:
            millis = tree.number(tree.relative(hwmon / "temp1_input"))
            if millis is not None:
                return millis / 1000, f"{hwmon.name} ({name})"
    return None, None


def thermal_zones(tree: SystemTree) -> dict[str, float] | None:
    """Every thermal zone's temperature (°C), keyed "thermal_zone0 (cpu-thermal)"."""
    zones = {}
    for zone in tree.glob("sys/class/thermal/thermal_zone*"):
        millis = tree.number(tree.relative(zone / "temp"))
        if millis is not None:
            kind = tree.text(tree.relative(zone / "type"))
            zones[f"{zone.name} ({kind})" if kind else zone.name] = millis / 1000
    return zones or None


def decode_throttled(value: int, source: str) -> dict[str, Any]:
    return {
        "raw": hex(value),
        "source": source,
        **{name: bool(value >> bit & 1) for name, bit in _THROTTLE_BITS.items()},
    }


def throttle_events(flags: dict[str, Any]) -> dict[str, list[str]]:
    """The decoded flags in words: {"now": [...], "since_boot": [...]}."""
    return {
        when: [words for key, words in THROTTLE_WORDS.items() if flags.get(f"{key}_{suffix}")]
        for when, suffix in (("now", "now"), ("since_boot", "occurred"))
    }


def throttling(
    tree: SystemTree, runner: CommandRunner | None, files_first: bool = False
) -> dict[str, Any] | None:
    """The Raspberry Pi firmware's throttling flags: `vcgencmd get_throttled` when it
    runs, else the firmware driver's `get_throttled` file in /sys. `files_first` reads
    the file first (a poll once a second should not start a process when a file says it)."""
    if files_first:
        return _throttling_file(tree) or _throttling_vcgencmd(runner)
    return _throttling_vcgencmd(runner) or _throttling_file(tree)


def _throttling_vcgencmd(runner: CommandRunner | None) -> dict[str, Any] | None:
    out = runner(["vcgencmd", "get_throttled"]) if runner is not None else None
    if out and "=" in out:  # "throttled=0x50000"
        try:
            return decode_throttled(_flags(out.split("=", 1)[1]), "vcgencmd get_throttled")
        except ValueError:
            pass
    return None


def _flags(text: str) -> int:
    """The firmware's throttling word (hex); ValueError for anything longer than 64 bits."""
    if len(text.strip()) > 18:  # "0x" and 16 digits
        raise ValueError(text)
    return int(text, 16)


def _throttling_file(tree: SystemTree) -> dict[str, Any] | None:
    for pattern in (
        "sys/devices/platform/*firmware*/get_throttled",
        "sys/devices/platform/*/*firmware*/get_throttled",
    ):
        for path in tree.glob(pattern):
            text = tree.text(tree.relative(path))
            try:
                return decode_throttled(_flags(text or ""), "/" + tree.relative(path))
            except ValueError:
                continue
    return None


def thermal_state(tree: SystemTree, runner: CommandRunner | None = None) -> dict[str, Any]:
    """What can change during a benchmark: temperature, throttling, clock, load."""
    temp, sensor = cpu_temperature(tree)
    load = (tree.text("proc/loadavg") or "").split()
    cur_khz = tree.number(_CPUFREQ + "scaling_cur_freq")
    return {
        "cpu_temp_c": temp,
        "cpu_temp_sensor": sensor,
        "throttling": throttling(tree, runner),
        "cpu_cur_mhz": round(cur_khz / 1000) if cur_khz else None,
        "load_avg_1m": _load(load[0]) if load else None,
    }


def _load(text: str) -> float | None:
    """The 1-minute load average; None when /proc/loadavg says something else."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def current_thermal_state(
    root: Path = ROOT, runner: CommandRunner | None = run_command
) -> dict[str, Any]:
    """`thermal_state` now (vcgencmd is asked on a Raspberry Pi only)."""
    tree = SystemTree(root)
    return thermal_state(tree, runner if is_raspberry_pi(tree) else None)


# -- the block --------------------------------------------------------------------
def _process_facts() -> dict[str, Any]:
    """This interpreter and the CPUs this process may use (real machine only)."""
    try:
        allowed: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        allowed = None
    return {
        "cpus_allowed": allowed,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
    }


def device_info(
    threads: int,
    root: Path = ROOT,
    runner: CommandRunner | None = run_command,
    name: str | None = None,
    tree: SystemTree | None = None,
) -> Device:
    """The device block of a manifest. `runtime` (the inference library's version and
    build) is filled later by whoever loads the model; it is None until then (the
    identity's config takes the installed llama.cpp, `llama_cpp_build`, read without
    loading it). `name`: the device's name (`--device-name`); `tree`: read through
    another reader than `root`'s."""
    tree = tree or SystemTree(root)
    root = tree.root
    real = root == ROOT
    info: dict[str, Any] = {
        **cpu_facts(tree, platform.machine() if real else None),
        "threads_used": threads,
        **frequency_facts(tree),
        **memory_facts(tree),
        **os_facts(tree),
        "board_model": board_model(tree),
        "power_source": power_source(tree),
        **thermal_state(tree, runner if is_raspberry_pi(tree) else None),
        "thermal_zones": thermal_zones(tree),
        **(
            _process_facts()
            if real
            else dict.fromkeys(("cpus_allowed", "platform", "python", "python_implementation"))
        ),
        "runtime": None,
        # this interpreter's llama.cpp: not a fake tree's
        "llama_cpp_build": installed_build() if real else None,
    }
    # systemd-detect-virt describes this machine only: not asked for a fake tree.
    info["hypervisor"] = virtualised(tree, info["hypervisor"], runner if real else None)
    if real:
        # uname's: under qemu-user /proc/sys/kernel/arch is the host's
        info["machine"] = platform.machine() or info["machine"]
        info["logical_cores"] = info["logical_cores"] or os.cpu_count()
    identity = DeviceIdentity(**read_identity(info, tree, name))
    return Device(**{**info, "identity": identity})


# Words in the DMI vendor or product name of a virtual machine (what
# systemd-detect-virt looks for): QEMU/KVM, VMware, VirtualBox, Hyper-V, Xen, Parallels,
# bhyve, Bochs. A physical machine's DMI names none of them.
_VM_DMI_WORDS = (
    "qemu",
    "kvm",
    "vmware",
    "virtualbox",
    "innotek",
    "virtual machine",
    "hvm domu",
    "xen",
    "parallels",
    "bhyve",
    "bochs",
)


def virtualised(
    tree: SystemTree, cpu_hypervisor: bool | None, runner: CommandRunner | None
) -> bool | None:
    """Whether the machine is a guest of a hypervisor (a VM: its timings are not a bare
    device's). x86 says so in a CPU flag; other CPUs (ARM guests) only through the DMI
    names, /sys/hypervisor (Xen) or `systemd-detect-virt --vm`. None: no way to tell."""
    if cpu_hypervisor:
        return True
    dmi = " ".join(
        tree.text(path) or "" for path in ("sys/class/dmi/id/sys_vendor", _DMI_PRODUCT)
    ).lower()
    if any(word in dmi for word in _VM_DMI_WORDS) or tree.text("sys/hypervisor/type"):
        return True
    # It prints the hypervisor and exits 0 in a VM; prints "none" and exits 1 otherwise.
    named = runner(["systemd-detect-virt", "--vm"]) if runner is not None else None
    if named and named != "none":
        return True
    return cpu_hypervisor


def is_raspberry_pi(tree: SystemTree) -> bool:
    return "raspberry pi" in (board_model(tree) or "").lower()


def machine(
    tree: SystemTree | None, runner: CommandRunner | None
) -> tuple[SystemTree, CommandRunner | None]:
    """What a reader reads: a given tree with the runner given (None: no commands),
    or, when no tree is given, this machine and its real commands."""
    if tree is None:
        return SystemTree(ROOT), runner or run_command
    return tree, runner
