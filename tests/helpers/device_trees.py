"""Fake /proc and /sys trees of a Raspberry Pi 5 and 4, a laptop (with RAPL and a
battery: intel_laptop_tree) and an AMD desktop, a fake `vcgencmd`, for the device block's
readers (system/device.py), the power sources and heat (system/power, system/heat.py)
and everything built on them (`edgebench doctor`)."""

from __future__ import annotations

import stat
from pathlib import Path

from edgebench.system.tree import SystemTree

PI5_CORE = """processor\t: {n}
BogoMIPS\t: 108.00
Features\t: {features}
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x4
CPU part\t: 0xd0b
CPU revision\t: 1
"""

PI5_FEATURES = (
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc "
    "dcpop asimddp"
)

# A Cortex-A72's (armv8.0-a): no dotprod, fp16 arithmetic, LSE atomics or RDM.
PI4_FEATURES = "fp asimd evtstrm crc32 cpuid"

PI5_SERIAL = "10000000abcdef01"
PI5_BOARD = """Revision\t: d04170
Serial\t\t: {serial}
Model\t\t: Raspberry Pi 5 Model B Rev 1.0
"""

LAPTOP_CORE = """processor\t: {n}
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 154
model name\t: 12th Gen Intel(R) Core(TM) i7-1260P
cpu MHz\t\t: 1117.000
physical id\t: 0
core id\t\t: {core}
flags\t\t: fpu vme sse sse2 ht pni ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2 avx_vnni
"""

MEMINFO = """MemTotal:        {total} kB
MemFree:          123456 kB
MemAvailable:    {available} kB
SwapTotal:        {swap} kB
"""

MACHINES = ("pi5", "laptop")
# The files every Linux machine has: path -> its text on each of MACHINES.
LINUX_FILES = {
    "proc/meminfo": (
        MEMINFO.format(total=8245020, available=7654320, swap=204796),
        MEMINFO.format(total=16086532, available=9876543, swap=2097148),
    ),
    "proc/loadavg": ("0.08 0.03 0.01 1/180 1234\n", "1.52 1.10 0.90 3/900 4321\n"),
    "proc/sys/kernel/osrelease": ("6.6.51+rpt-rpi-2712\n", "6.8.0-45-generic\n"),
    "proc/sys/kernel/arch": ("aarch64\n", "x86_64\n"),
    "etc/os-release": (
        'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n',
        'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n',
    ),
    # what tells units apart (system/identity.py): an SD card image's machine-id (every
    # board flashed from it shares it) and the hostname
    "etc/machine-id": ("5c3a1e0f9d2b4c8e9a7f6b5d4c3b2a19\n", "0f1e2d3c4b5a69788796a5b4c3d2e1f0\n"),
    "proc/sys/kernel/hostname": ("raspberrypi\n", "thinkpad\n"),
}
# The laptop's DMI ids, which only root may read (0400), as on most distributions.
LAPTOP_DMI_IDS = {
    "sys/class/dmi/id/product_uuid": "4c4c4544-0042-3510-8052-b7c04f4e3232\n",
    "sys/class/dmi/id/board_serial": "L1HF2AB03CD\n",
}


def linux_files(machine: str, cpuinfo: str) -> dict[str, str]:
    """The files every Linux machine has, as on `machine` (one of MACHINES), with its
    /proc/cpuinfo."""
    at = MACHINES.index(machine)
    return {"proc/cpuinfo": cpuinfo} | {path: texts[at] for path, texts in LINUX_FILES.items()}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def cpu_files(cores: list[int], governor: str, max_khz: int, cur_khz: int) -> dict[str, str]:
    """Topology (one package, these core ids) and cpufreq files for every CPU."""
    files = {"sys/devices/system/cpu/online": f"0-{len(cores) - 1}\n"}
    for cpu, core in enumerate(cores):
        base = f"sys/devices/system/cpu/cpu{cpu}/"
        files[base + "topology/core_id"] = f"{core}\n"
        files[base + "topology/physical_package_id"] = "0\n"
        files[base + "cpufreq/scaling_governor"] = f"{governor}\n"
        files[base + "cpufreq/cpuinfo_max_freq"] = f"{max_khz}\n"
        files[base + "cpufreq/scaling_cur_freq"] = f"{cur_khz}\n"
    return files


def raspberry_pi_files(
    model: str, cpuinfo: str, temp: str, throttled: str, max_khz: int, cur_khz: int
) -> dict[str, str]:
    """A Raspberry Pi's files: device-tree model, CPU thermal zone (millidegrees), the
    firmware's get_throttled (hex), four cores' cpufreq."""
    return {
        **linux_files("pi5", cpuinfo),
        "proc/device-tree/model": f"{model}\x00",
        "sys/class/thermal/thermal_zone0/type": "cpu-thermal\n",
        "sys/class/thermal/thermal_zone0/temp": f"{temp}\n",
        "sys/devices/platform/soc/soc:firmware/get_throttled": f"{throttled}\n",
        **cpu_files([0, 1, 2, 3], "ondemand", max_khz, cur_khz),
    }


def pi5_tree(tmp_path: Path, folder: str = "pi5", serial: str = PI5_SERIAL) -> Path:
    """A Raspberry Pi 5 in tmp_path/folder; another `serial` is another board of the same
    model flashed from the same image (same machine-id and hostname)."""
    cores = "\n".join(PI5_CORE.format(n=n, features=PI5_FEATURES) for n in range(4))
    cpuinfo = cores + "\n" + PI5_BOARD.format(serial=serial)
    model = "Raspberry Pi 5 Model B Rev 1.0"
    files = raspberry_pi_files(model, cpuinfo, "51350", "50005", 2_400_000, 1_500_000)
    # the firmware's copy of the serial, NUL-terminated as device-tree strings are
    files["sys/firmware/devicetree/base/serial-number"] = f"{serial}\x00"
    return write(tmp_path / folder, files)


def laptop_tree(tmp_path: Path) -> Path:
    cores = [0, 1, 0, 1]  # two cores with two hyper-threads each
    cpuinfo = "\n".join(LAPTOP_CORE.format(n=n, core=c) for n, c in enumerate(cores))
    files = {
        **linux_files("laptop", cpuinfo),
        "sys/class/dmi/id/sys_vendor": "LENOVO\n",
        "sys/class/dmi/id/product_name": "21CB0078GE\n",
        "sys/class/thermal/thermal_zone0/type": "acpitz\n",
        "sys/class/thermal/thermal_zone0/temp": "45000\n",
        "sys/class/thermal/thermal_zone5/type": "x86_pkg_temp\n",
        "sys/class/thermal/thermal_zone5/temp": "62000\n",
        "sys/class/power_supply/AC/type": "Mains\n",
        "sys/class/power_supply/AC/online": "0\n",
        "sys/class/power_supply/BAT0/type": "Battery\n",
        **cpu_files(cores, "powersave", 4_700_000, 1_117_000),
        **LAPTOP_DMI_IDS,
    }
    root = write(tmp_path / "laptop", files)
    for name in LAPTOP_DMI_IDS:
        (root / name).chmod(0o400)
    return root


# -- power and heat (system/power, system/heat.py) ---------------------------------
class UserTree(SystemTree):
    """Reads a fake tree as a user who is not root would: a file without the read bit
    for others (RAPL's energy_uj is 0400 since Linux 5.10) is a PermissionError, even
    when the tests run as root."""

    def read(self, path: str) -> str:
        if not (self.root / path).stat().st_mode & stat.S_IROTH:
            raise PermissionError(13, "Permission denied", str(self.root / path))
        return super().read(path)


# Pi 5 PMIC rails: (ADC channel of the current, of the voltage, amps, volts), the
# layout and channel numbers `vcgencmd pmic_read_adc` prints, values of a loaded board.
PI5_RAILS = {
    "3V7_WL_SW": (0, 8, 0.0, 3.7925),
    "3V3_SYS": (1, 9, 0.0712, 3.3118),
    "1V8_SYS": (2, 10, 0.1874, 1.8002),
    "DDR_VDD2": (3, 11, 0.0261, 1.1031),
    "DDR_VDDQ": (4, 12, 0.0, 0.6050),
    "1V1_SYS": (5, 13, 0.1903, 1.1047),
    "0V8_SW": (6, 14, 0.3482, 0.8023),
    "VDD_CORE": (7, 15, 3.6611, 0.8874),
    "3V3_DAC": (17, 20, 0.00037, 3.3052),
    "3V3_ADC": (18, 21, 0.00043, 3.3028),
    "0V8_AON": (16, 19, 0.0058, 0.7975),
    "HDMI": (22, 23, 0.0137, 5.0702),
}


def pmic_read_adc(rails: dict[str, tuple[int, int, float, float]] = PI5_RAILS) -> str:
    """The text of `vcgencmd pmic_read_adc`: every current, every voltage, then the 5 V
    input and the RTC battery, which have a voltage only."""
    currents = [f"{r + '_A':>12} current({a})={amps:.8f}A" for r, (a, _, amps, _) in rails.items()]
    volts = [f"{r + '_V':>12} volt({v})={volts:.8f}V" for r, (_, v, _, volts) in rails.items()]
    inputs = [f"{'EXT5V_V':>12} volt(24)=5.12880000V", f"{'BATT_V':>12} volt(25)=0.00512820V"]
    return "\n".join(currents + volts + inputs)


class FakeVcgencmd:
    """`vcgencmd` of a Raspberry Pi: answers by subcommand (None: it fails), remembers
    what was asked."""

    def __init__(self, **answers: str | None) -> None:
        self.answers = {
            "pmic_read_adc": pmic_read_adc(),
            "measure_temp": "temp=63.7'C",
            "get_throttled": "throttled=0x0",
        } | answers
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> str | None:
        self.calls.append(argv)
        return self.answers.get(argv[1]) if argv[0] == "vcgencmd" else None

    def asked(self, subcommand: str) -> int:
        return sum(1 for argv in self.calls if argv[1:] == [subcommand])


def pi4_tree(tmp_path: Path) -> Path:
    """A Raspberry Pi 4 (Cortex-A72): no PMIC ADC, so no current sensing."""
    model = "Raspberry Pi 4 Model B Rev 1.4"
    cores = (PI5_CORE.format(n=n, features=PI4_FEATURES) for n in range(4))
    cpuinfo = "\n".join(core.replace("0xd0b", "0xd08") for core in cores) + f"\nModel\t: {model}\n"
    files = raspberry_pi_files(model, cpuinfo, "58426", "0", 1_800_000, 1_800_000)
    return write(tmp_path / "pi4", files)


def rapl_zone(zone: str, name: str, energy_uj: int, max_uj: int) -> dict[str, str]:
    base = f"sys/class/powercap/{zone}/"
    return {
        base + "name": f"{name}\n",
        base + "energy_uj": f"{energy_uj}\n",
        base + "max_energy_range_uj": f"{max_uj}\n",
    }


RAPL_MAX_UJ = 262_143_328_850  # an Intel package counter's range (about 262 kJ)


def battery_files(status: str, **values: int) -> dict[str, str]:
    """BAT0 with this status and power_now / current_now / voltage_now (µW, µA, µV)."""
    base = "sys/class/power_supply/BAT0/"
    return {
        base + "type": "Battery\n",
        base + "status": f"{status}\n",
        **{base + name: f"{value}\n" for name, value in values.items()},
    }


def intel_laptop_tree(tmp_path: Path) -> Path:
    """The laptop with RAPL (package, its core/uncore parts, DRAM, the platform zone and
    the MMIO twin of the package) and its battery discharging at 11.5 W."""
    root = laptop_tree(tmp_path)
    files = {
        **rapl_zone("intel-rapl:0", "package-0", 1_000_000, RAPL_MAX_UJ),
        **rapl_zone("intel-rapl:0:0", "core", 600_000, RAPL_MAX_UJ),
        **rapl_zone("intel-rapl:0:1", "uncore", 50_000, RAPL_MAX_UJ),
        **rapl_zone("intel-rapl:0:2", "dram", 200_000, 65_532_610_987),
        **rapl_zone("intel-rapl:1", "psys", 9_000_000, RAPL_MAX_UJ),
        **rapl_zone("intel-rapl-mmio:0", "package-0", 1_000_100, RAPL_MAX_UJ),
        **battery_files("Discharging", power_now=11_500_000, voltage_now=16_900_000),
    }
    write(root, files)
    for path in root.glob("sys/class/powercap/*/energy_uj"):
        path.chmod(0o400)  # root-only, as since Linux 5.10
    return root


AMD_CORE = """processor\t: {n}
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 33
model name\t: AMD Ryzen 7 5800X 8-Core Processor
physical id\t: 0
core id\t\t: {n}
flags\t\t: fpu vme sse sse2 ht pni ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2
"""


def amd_desktop_tree(tmp_path: Path) -> Path:
    """A Ryzen desktop on mains: RAPL through the powercap driver, energy_uj root-only;
    k10temp for the temperature; no battery, no hwmon power sensor."""
    cpuinfo = "\n".join(AMD_CORE.format(n=n) for n in range(4))
    files = {
        **linux_files("laptop", cpuinfo),
        "sys/class/dmi/id/sys_vendor": "Micro-Star International Co., Ltd.\n",
        "sys/class/dmi/id/product_name": "MS-7C91\n",
        "sys/class/hwmon/hwmon1/name": "k10temp\n",
        "sys/class/hwmon/hwmon1/temp1_input": "48750\n",
        **rapl_zone("intel-rapl:0", "package-0", 41_000_000, 65_532_610_987),
        **rapl_zone("intel-rapl:0:0", "core", 30_000_000, 65_532_610_987),
        **cpu_files([0, 1, 2, 3], "schedutil", 3_800_000, 2_200_000),
    }
    root = write(tmp_path / "amd", files)
    for path in root.glob("sys/class/powercap/*/energy_uj"):
        path.chmod(0o400)
    return root
