"""The device block from fake /proc and /sys trees: a Raspberry Pi 5 and a laptop."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.system.device import (
    current_thermal_state,
    decode_throttled,
    device_info,
    virtualised,
)
from edgebench.system.tree import SystemTree
from tests.helpers.device_trees import laptop_tree, pi5_tree, write


@pytest.fixture
def pi5(tmp_path: Path) -> Path:
    return pi5_tree(tmp_path)


@pytest.fixture
def laptop(tmp_path: Path) -> Path:
    return laptop_tree(tmp_path)


class Runner:
    """Stands in for running a command; remembers what was asked."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> str | None:
        self.calls.append(argv)
        return self.answer


def test_raspberry_pi_5(pi5: Path) -> None:
    runner = Runner("throttled=0x50000")
    info = device_info(4, root=pi5, runner=runner)
    assert runner.calls == [["vcgencmd", "get_throttled"]]
    assert info.board_model == "Raspberry Pi 5 Model B Rev 1.0"
    assert info.cpu_model == "Cortex-A76"
    assert info.cpu_vendor == "ARM"
    assert info.cpu_simd == ["asimd", "asimdhp", "asimddp"]
    assert "crc32" in info.cpu_flags
    assert info.hypervisor is None  # ARM has no such flag: unknown, not False
    assert (info.logical_cores, info.physical_cores, info.threads_used) == (4, 4, 4)
    assert info.machine == "aarch64"
    assert info.kernel == "6.6.51+rpt-rpi-2712"
    assert info.os == "Debian GNU/Linux 12 (bookworm)"
    assert (info.ram_total_mb, info.ram_available_mb, info.swap_total_mb) == (
        8052,
        7475,
        200,
    )
    assert info.governor == "ondemand"
    assert (info.cpu_max_mhz, info.cpu_cur_mhz) == (2400, 1500)
    assert info.cpu_temp_c == pytest.approx(51.35)
    assert info.cpu_temp_sensor == "thermal_zone0 (cpu-thermal)"
    assert info.load_avg_1m == 0.08
    assert info.power_source is None
    throttling = info.throttling
    assert throttling["raw"] == "0x50000" and throttling["source"] == "vcgencmd get_throttled"
    assert throttling["under_voltage_occurred"] and throttling["throttled_occurred"]
    assert not throttling["throttled_now"] and not throttling["under_voltage_now"]
    # Facts of this process are not read from a fake tree.
    assert info.python is None and info.platform is None
    assert info.runtime is None  # filled by whoever loads the model


def test_pi_throttling_from_sysfs_when_vcgencmd_is_missing(pi5: Path) -> None:
    info = device_info(4, root=pi5, runner=Runner(None))
    throttling = info.throttling
    assert throttling["raw"] == "0x50005"
    assert throttling["source"] == "/sys/devices/platform/soc/soc:firmware/get_throttled"
    assert throttling["under_voltage_now"] and throttling["throttled_now"]
    assert not throttling["freq_capped_now"]


def test_laptop(laptop: Path) -> None:
    runner = Runner("throttled=0x0")
    info = device_info(2, root=laptop, runner=runner)
    assert runner.calls == []  # vcgencmd is only asked on a Raspberry Pi
    assert info.throttling is None
    assert info.cpu_model == "12th Gen Intel(R) Core(TM) i7-1260P"
    assert info.cpu_vendor == "GenuineIntel"
    # "pni" is how x86 kernels spell SSE3
    assert info.cpu_simd == ["sse3", "ssse3", "avx", "avx2", "fma", "f16c", "avx_vnni"]
    assert info.hypervisor is False
    assert (info.logical_cores, info.physical_cores) == (4, 2)
    assert info.board_model == "LENOVO 21CB0078GE"
    assert info.os == "Ubuntu 24.04.1 LTS"
    assert info.governor == "powersave"
    assert (info.cpu_max_mhz, info.cpu_cur_mhz) == (4700, 1117)
    assert info.cpu_temp_c == 62.0  # the package sensor, not the ACPI zone
    assert info.cpu_temp_sensor == "thermal_zone5 (x86_pkg_temp)"
    assert info.power_source == "battery"
    assert info.ram_total_mb == 15710


def test_absent_facts_are_null_never_guessed(tmp_path: Path) -> None:
    info = device_info(2, root=tmp_path, runner=Runner("throttled=0x0"))
    assert info.threads_used == 2
    # the identity is always there; with nothing to read, its unit has no source
    assert {k for k, v in info.to_json().items() if v is not None} == {"threads_used", "identity"}
    assert info.identity.unit_sources == []
    assert info.identity.hostname is None


def test_hwmon_temperature_when_no_thermal_zone_names_the_cpu(laptop: Path) -> None:
    for name in ("type", "temp"):
        (laptop / "sys/class/thermal/thermal_zone5" / name).unlink()
    write(laptop, {"sys/class/hwmon/hwmon3/name": "k10temp\n"})
    write(laptop, {"sys/class/hwmon/hwmon3/temp1_input": "55125\n"})
    state = current_thermal_state(laptop)
    assert state["cpu_temp_c"] == pytest.approx(55.125)
    assert state["cpu_temp_sensor"] == "hwmon3 (k10temp)"


def test_garbage_files_give_null(pi5: Path) -> None:
    write(
        pi5,
        {
            "proc/meminfo": "nonsense\n",
            "sys/devices/system/cpu/online": "zero-three\n",
            "sys/class/thermal/thermal_zone0/temp": "hot\n",
            "sys/devices/platform/soc/soc:firmware/get_throttled": "?\n",
            "proc/loadavg": "",
        },
    )
    info = device_info(4, root=pi5, runner=Runner("garbage"))
    assert info.ram_total_mb is None and info.cpu_temp_c is None
    assert info.throttling is None and info.load_avg_1m is None
    assert info.logical_cores == 4  # counted from /proc/cpuinfo instead


def test_decode_throttled_bits() -> None:
    flags = decode_throttled(0x80008, "test")
    assert flags["soft_temp_limit_now"] and flags["soft_temp_limit_occurred"]
    assert sum(v for k, v in flags.items() if isinstance(v, bool)) == 2


def test_this_machine_is_filled() -> None:
    # The real /proc and /sys; no command is run (vcgencmd on a Pi), as in any unit test.
    info = device_info(2, runner=Runner(None))
    for key in ("cpu_model", "cpu_flags", "logical_cores", "ram_total_mb", "kernel", "os"):
        assert getattr(info, key), key
    assert info.python and info.platform and info.machine


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"sys/class/dmi/id/sys_vendor": "QEMU\n"}, True),
        ({"sys/class/dmi/id/product_name": "KVM Virtual Machine\n"}, True),
        ({"sys/class/dmi/id/product_name": "Virtual Machine\n"}, True),  # Hyper-V
        ({"sys/class/dmi/id/sys_vendor": "VMware, Inc.\n"}, True),
        ({"sys/hypervisor/type": "xen\n"}, True),
        ({"sys/class/dmi/id/product_name": "Raspberry Pi 5\n"}, None),
    ],
)
def test_an_arm_guest_is_recognised_as_a_vm(
    pi5: Path, files: dict[str, str], expected: bool | None
) -> None:
    # ARM has no hypervisor CPU flag: the DMI names and /sys/hypervisor say it instead.
    write(pi5, files)
    assert device_info(4, root=pi5, runner=Runner(None)).hypervisor is expected


def test_systemd_detect_virt_is_asked_about_this_machine_only(laptop: Path) -> None:
    runner = Runner("kvm")
    assert device_info(2, root=laptop, runner=runner).hypervisor is False
    assert ["systemd-detect-virt", "--vm"] not in runner.calls  # a fake tree: not asked
    empty = SystemTree(laptop / "nothing")
    assert virtualised(empty, None, runner) is True
    assert runner.calls == [["systemd-detect-virt", "--vm"]]
    # "none" (exit 1, so no answer) leaves what the CPU said: unknown on ARM.
    assert virtualised(empty, None, Runner(None)) is None
    assert virtualised(empty, False, Runner(None)) is False
