"""heat_sample from fake trees: temperature (thermal zone, else `vcgencmd measure_temp`),
each core's clock, and every bit of the Pi's throttling mask, now and since boot."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.system.heat import heat_sample
from edgebench.system.tree import SystemTree
from tests.helpers.device_trees import (
    FakeVcgencmd,
    amd_desktop_tree,
    cpu_files,
    laptop_tree,
    pi4_tree,
    pi5_tree,
    write,
)

FIRMWARE_FILE = "sys/devices/platform/soc/soc:firmware/get_throttled"
EVENTS = ("under-voltage", "arm frequency capped", "throttled", "soft temperature limit")
FLAGS = ("under_voltage", "freq_capped", "throttled", "soft_temp_limit")


def test_pi5_reads_files_without_starting_vcgencmd(tmp_path: Path) -> None:
    vcgencmd = FakeVcgencmd()
    heat = heat_sample(SystemTree(pi5_tree(tmp_path)), vcgencmd)
    assert heat["temp_c"] == pytest.approx(51.35)
    assert heat["temp_source"] == "thermal_zone0 (cpu-thermal)"
    assert heat["freq_mhz"] == [1500, 1500, 1500, 1500]
    throttled = heat["throttled"]  # the firmware file: 0x50005
    assert throttled["raw"] == "0x50005" and throttled["source"] == "/" + FIRMWARE_FILE
    assert throttled["now"] == ["under-voltage", "throttled"]
    assert throttled["since_boot"] == ["under-voltage", "throttled"]
    assert vcgencmd.calls == []  # once a second, files cost no process start


def test_pi5_vcgencmd_when_no_file_says_it(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path)
    for name in ("type", "temp"):
        (root / "sys/class/thermal/thermal_zone0" / name).unlink()
    (root / FIRMWARE_FILE).unlink()
    vcgencmd = FakeVcgencmd(get_throttled="throttled=0x80008")
    heat = heat_sample(SystemTree(root), vcgencmd)
    assert (heat["temp_c"], heat["temp_source"]) == (63.7, "vcgencmd measure_temp")
    assert heat["throttled"]["source"] == "vcgencmd get_throttled"
    assert heat["throttled"]["now"] == heat["throttled"]["since_boot"] == ["soft temperature limit"]
    vcgencmd.answers.update(measure_temp=None, get_throttled=None)
    heat = heat_sample(SystemTree(root), vcgencmd)
    assert (heat["temp_c"], heat["temp_source"], heat["throttled"]) == (None, None, None)


@pytest.mark.parametrize("bit", [0, 1, 2, 3, 16, 17, 18, 19])
def test_every_throttle_bit(tmp_path: Path, bit: int) -> None:
    root = write(pi5_tree(tmp_path), {FIRMWARE_FILE: f"{1 << bit:x}\n"})
    throttled = heat_sample(SystemTree(root), FakeVcgencmd())["throttled"]
    event, flag = EVENTS[bit % 16], FLAGS[bit % 16]
    now = bit < 16
    assert throttled["now"] == ([event] if now else [])
    assert throttled["since_boot"] == ([] if now else [event])
    set_flags = [key for key, value in throttled.items() if value is True]
    assert set_flags == [f"{flag}_{'now' if now else 'occurred'}"]
    assert throttled["raw"] == hex(1 << bit)


def test_pi4(tmp_path: Path) -> None:
    heat = heat_sample(SystemTree(pi4_tree(tmp_path)), FakeVcgencmd())
    assert heat["temp_c"] == pytest.approx(58.426)
    assert heat["freq_mhz"] == [1800] * 4
    assert heat["throttled"]["now"] == [] and heat["throttled"]["since_boot"] == []


def test_laptop_never_asks_vcgencmd(tmp_path: Path) -> None:
    vcgencmd = FakeVcgencmd()
    heat = heat_sample(SystemTree(laptop_tree(tmp_path)), vcgencmd)
    assert heat == {
        "temp_c": 62.0,
        "temp_source": "thermal_zone5 (x86_pkg_temp)",
        "freq_mhz": [1117] * 4,
        "throttled": None,
    }
    assert vcgencmd.calls == []


def test_per_core_clocks_in_cpu_order(tmp_path: Path) -> None:
    root = amd_desktop_tree(tmp_path)
    write(root, cpu_files(list(range(12)), "schedutil", 3_800_000, 2_200_000))
    write(root, {"sys/devices/system/cpu/cpu10/cpufreq/scaling_cur_freq": "4650000\n"})
    (root / "sys/devices/system/cpu/cpu3/cpufreq/scaling_cur_freq").unlink()  # offline
    heat = heat_sample(SystemTree(root))
    assert heat["freq_mhz"] == [2200] * 3 + [None] + [2200] * 6 + [4650, 2200]
    assert (heat["temp_c"], heat["temp_source"]) == (48.75, "hwmon1 (k10temp)")


def test_nothing_readable_is_null(tmp_path: Path) -> None:
    assert heat_sample(SystemTree(tmp_path), FakeVcgencmd()) == {
        "temp_c": None,
        "temp_source": None,
        "freq_mhz": [],
        "throttled": None,
    }


def test_this_machine_without_error() -> None:
    heat = heat_sample()
    assert set(heat) == {"temp_c", "temp_source", "freq_mhz", "throttled"}
    assert all(f is None or f > 0 for f in heat["freq_mhz"])
