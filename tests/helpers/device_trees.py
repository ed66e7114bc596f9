"""Fake /proc and /sys trees of a Raspberry Pi 5 and a laptop, for the device block's
readers (system/device.py) and everything built on them (`edgebench doctor`)."""

from __future__ import annotations

from pathlib import Path

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

PI5_BOARD = """Revision\t: d04170
Serial\t\t: 10000000abcdef01
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


def pi5_tree(tmp_path: Path) -> Path:
    cpuinfo = (
        "\n".join(PI5_CORE.format(n=n, features=PI5_FEATURES) for n in range(4)) + "\n" + PI5_BOARD
    )
    files = {
        **linux_files("pi5", cpuinfo),
        "proc/device-tree/model": "Raspberry Pi 5 Model B Rev 1.0\x00",
        "sys/class/thermal/thermal_zone0/type": "cpu-thermal\n",
        "sys/class/thermal/thermal_zone0/temp": "51350\n",
        "sys/devices/platform/soc/soc:firmware/get_throttled": "50005\n",
        **cpu_files([0, 1, 2, 3], "ondemand", 2_400_000, 1_500_000),
    }
    return write(tmp_path / "pi5", files)


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
    }
    return write(tmp_path / "laptop", files)
