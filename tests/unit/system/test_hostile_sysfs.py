"""The heat reader and the power sources on hostile /sys and /proc files (fake roots): a
FIFO or a link to /dev/zero where a sensor's file is, a 5,000-digit "temperature", a CPU
folder named with a digit int() refuses, a throttling word of 1,000 hex digits, a load
average or a vcgencmd answer that is not a number. Each is a reading that is None (the
timeline's row without it), never a hang, an unbounded read or an exception: the
timeline reads these once a second, and the run's start reads them for the manifest."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from edgebench.system.device import thermal_state
from edgebench.system.heat import heat_sample
from edgebench.system.power import battery, choose_power_source, hwmon, rapl
from edgebench.system.tree import SystemTree
from tests.helpers.device_trees import (
    FakeVcgencmd,
    battery_files,
    laptop_tree,
    pi5_tree,
    rapl_zone,
    write,
)

ZONE_TEMP = "sys/class/thermal/thermal_zone0/temp"
FIRMWARE_FILE = "sys/devices/platform/soc/soc:firmware/get_throttled"
HWMON = "sys/class/hwmon/hwmon3"


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`'s value; fails (instead of hanging the suite) when it blocks."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked reading a file"
    assert result, "raised (see the thread's exception above)"
    return result[0]


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def to_zero(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(fifo, id="a FIFO"),
        pytest.param(to_zero, id="a link to /dev/zero"),
        pytest.param(lambda path: path.write_text("9" * 5000), id="5000 digits"),
        pytest.param(lambda path: path.write_text("1" * (5 << 20)), id="5 MiB"),
    ],
)
def test_the_heat_reader_is_never_blocked_or_broken_by_a_sensor_file(
    tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    root = pi5_tree(tmp_path)
    spoil(root / ZONE_TEMP)
    spoil(root / FIRMWARE_FILE)
    spoil(root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
    heat = within(5, lambda: heat_sample(SystemTree(root), FakeVcgencmd()))
    # the file gives nothing: vcgencmd, asked only then, says it
    assert (heat["temp_c"], heat["temp_source"]) == (63.7, "vcgencmd measure_temp")
    assert heat["freq_mhz"][0] is None and heat["freq_mhz"][1:] == [1500, 1500, 1500]
    assert heat["throttled"]["source"] == "vcgencmd get_throttled"


@pytest.mark.parametrize(
    "answer",
    ["temp=--'C", "temp=1.2.3'C", "temp=+'C", "temp=.'C", "temp=1" + "0" * 400 + "'C"],
    ids=["--", "1.2.3", "+", ".", "1e400"],
)
def test_a_vcgencmd_temperature_that_is_no_number_is_none(tmp_path: Path, answer: str) -> None:
    root = pi5_tree(tmp_path)
    (root / ZONE_TEMP).unlink()
    heat = heat_sample(SystemTree(root), FakeVcgencmd(measure_temp=answer))
    assert (heat["temp_c"], heat["temp_source"]) == (None, None)


@pytest.mark.parametrize(
    "word", ["0x" + "f" * 1000, "throttled", ""], ids=["1000 digits", "a word", "empty"]
)
def test_a_throttling_word_of_more_than_64_bits_is_none(tmp_path: Path, word: str) -> None:
    root = write(pi5_tree(tmp_path), {FIRMWARE_FILE: word})
    heat = heat_sample(SystemTree(root), FakeVcgencmd(get_throttled=f"throttled={word}"))
    assert heat["throttled"] is None


def test_a_cpu_folder_named_with_a_digit_int_refuses_is_passed_over(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path)
    (root / "sys/devices/system/cpu/cpu\u00b2/cpufreq").mkdir(parents=True)
    (root / "sys/devices/system/cpu/cpu\u00b2/cpufreq/scaling_cur_freq").write_text("1000\n")
    assert heat_sample(SystemTree(root), FakeVcgencmd())["freq_mhz"] == [1500] * 4


@pytest.mark.parametrize("loadavg", ["abc 0 0", "nan 1 1", "inf 1 1", "1e999 1 1"])
def test_a_load_average_that_is_no_number_is_none(tmp_path: Path, loadavg: str) -> None:
    root = write(laptop_tree(tmp_path), {"proc/loadavg": loadavg})
    assert thermal_state(SystemTree(root))["load_avg_1m"] is None


# -- the power sources' probes (the run's start) and readings (the timeline) -------------
def test_a_hwmon_sensor_that_is_a_fifo_is_skipped_not_waited_for(tmp_path: Path) -> None:
    root = write(
        laptop_tree(tmp_path), {f"{HWMON}/name": "ina226\n", f"{HWMON}/power1_input": "0\n"}
    )
    fifo(root / HWMON / "power1_input")
    source, reason = within(5, lambda: hwmon.probe(SystemTree(root)))
    assert source is None and "unreadable" in reason


def test_a_hwmon_power_past_a_float_is_no_reading(tmp_path: Path) -> None:
    root = write(
        laptop_tree(tmp_path),
        {f"{HWMON}/name": "ina226\n", f"{HWMON}/power1_input": "2500000\n"},
    )
    source, _ = hwmon.probe(SystemTree(root))
    assert source is not None and source.read().watts == 2.5
    (root / HWMON / "power1_input").write_text("9" * 4000)
    assert source.read() is None


def test_a_rapl_counter_linked_to_dev_zero_is_no_source(tmp_path: Path) -> None:
    zone = "sys/class/powercap/intel-rapl:0"
    root = write(laptop_tree(tmp_path), rapl_zone("intel-rapl:0", "package-0", 5, 2**32))
    to_zero(root / zone / "energy_uj")
    source, reason = within(5, lambda: rapl.probe(SystemTree(root)))
    assert source is None and "unreadable" in reason


@pytest.mark.parametrize("value", ["9" * 4000, "-" + "9" * 30], ids=["4000 digits", "-1e30"])
def test_a_battery_gauge_of_absurd_numbers_is_no_source(tmp_path: Path, value: str) -> None:
    supply = "sys/class/power_supply/BAT0"
    files = battery_files("Discharging")
    files |= {f"{supply}/current_now": value, f"{supply}/voltage_now": value}
    root = write(laptop_tree(tmp_path), files)
    source, reason = battery.probe(SystemTree(root))
    assert source is None and "without power_now or current_now" in reason


def test_choosing_a_source_on_a_machine_of_hostile_files_ends(tmp_path: Path) -> None:
    """Every tier's files spoiled at once: the run's start gets its reason, no hang."""
    root = write(
        laptop_tree(tmp_path),
        {
            f"{HWMON}/name": "ina226\n",
            f"{HWMON}/power1_input": "0\n",
            **rapl_zone("intel-rapl:0", "package-0", 5, 2**32),
        },
    )
    fifo(root / HWMON / "power1_input")
    to_zero(root / "sys/class/powercap/intel-rapl:0/energy_uj")
    choice = within(5, lambda: choose_power_source(SystemTree(root), FakeVcgencmd()))
    assert choice.source is None and "RAPL" in (choice.reason or "")
