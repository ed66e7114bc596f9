"""Power sources by tier from fake trees and a fake `vcgencmd`: a Raspberry Pi 5 (PMIC
rails), a Pi 4 (no current sensing), an Intel laptop (RAPL with wrap-around, a
discharging battery), an AMD desktop (RAPL root-only) and hwmon chips."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.system.power import PowerChoice, choose_power_source, energy_between
from edgebench.system.power.sample import PowerSample
from edgebench.system.tree import SystemTree
from tests.helpers.device_trees import (
    PI5_RAILS,
    RAPL_MAX_UJ,
    FakeVcgencmd,
    UserTree,
    amd_desktop_tree,
    battery_files,
    intel_laptop_tree,
    pi4_tree,
    pi5_tree,
    write,
)

NOT_PI5 = "not a Raspberry Pi 5"
NO_RAPL = "RAPL: no /sys/class/powercap/intel-rapl* package zone"


def chosen(choice: PowerChoice) -> tuple[str, str]:
    assert choice.source is not None, choice.reason
    assert choice.reason is None and choice.log is None
    return choice.source.name, choice.source.tier


# -- Raspberry Pi 5 -------------------------------------------------------------------
def test_pi5_pmic_sums_volts_times_amps_of_the_rails(tmp_path: Path) -> None:
    vcgencmd = FakeVcgencmd()
    choice = choose_power_source(SystemTree(pi5_tree(tmp_path)), vcgencmd)
    assert chosen(choice) == ("pi5-pmic", "board-pmic")
    sample = choice.source.read()  # type: ignore[union-attr]
    expected = sum(amps * volts for _, _, amps, volts in PI5_RAILS.values())
    assert sample is not None and sample.joules is None
    assert sample.watts == pytest.approx(expected, rel=1e-9)
    assert 3.0 < sample.watts < 5.0  # a loaded board, as the rails above say
    assert vcgencmd.asked("pmic_read_adc") == 2  # once to probe, once to read
    covers = choice.source.covers  # type: ignore[union-attr]
    # 12 rails with a current; EXT5V_V and BATT_V have none and are not counted
    assert "12 rails" in covers and "EXT5V" not in covers and "VDD_CORE" in covers
    assert "no correction" in covers and "USB" in covers


def test_pi5_reading_that_fails_is_a_gap(tmp_path: Path) -> None:
    vcgencmd = FakeVcgencmd()
    source = choose_power_source(SystemTree(pi5_tree(tmp_path)), vcgencmd).source
    vcgencmd.answers["pmic_read_adc"] = None
    assert source is not None and source.read() is None
    vcgencmd.answers["pmic_read_adc"] = 'error=1 error_msg="Command not registered"'
    assert source.read() is None


def test_pi5_without_vcgencmd_says_why(tmp_path: Path) -> None:
    choice = choose_power_source(SystemTree(pi5_tree(tmp_path)), FakeVcgencmd(pmic_read_adc=None))
    assert choice.source is None
    assert choice.reason == (
        "Raspberry Pi 5 Model B Rev 1.0: `vcgencmd pmic_read_adc` gave no rail readings "
        "(is vcgencmd installed and the user in the video group?); "
        f"{NO_RAPL}; no battery; no hwmon power sensor"
    )


# -- Raspberry Pi 4 -------------------------------------------------------------------
def test_pi4_has_no_current_sensing(tmp_path: Path) -> None:
    vcgencmd = FakeVcgencmd()
    choice = choose_power_source(SystemTree(pi4_tree(tmp_path)), vcgencmd)
    assert choice == PowerChoice(
        source=None,
        log=None,
        reason=(
            "Raspberry Pi 4 Model B Rev 1.4: no current sensing (only the Pi 5's PMIC "
            f"measures its rails); {NO_RAPL}; no battery; no hwmon power sensor"
        ),
    )
    assert vcgencmd.calls == []  # nothing to ask a Pi 4's firmware


def test_nothing_readable_gives_one_line_per_tier(tmp_path: Path) -> None:
    choice = choose_power_source(SystemTree(tmp_path), FakeVcgencmd())
    assert choice.reason == f"{NOT_PI5}; {NO_RAPL}; no battery; no hwmon power sensor"
    assert "\n" not in choice.reason


# -- Intel laptop: RAPL and the battery ---------------------------------------------
def set_energy(root: Path, zone: str, energy_uj: int) -> None:
    (root / f"sys/class/powercap/{zone}/energy_uj").write_text(f"{energy_uj}\n")


def test_intel_rapl_counts_package_and_dram_only(tmp_path: Path) -> None:
    root = intel_laptop_tree(tmp_path)
    choice = choose_power_source(SystemTree(root))  # as root: RAPL first
    assert chosen(choice) == ("rapl", "rapl")
    source = choice.source
    assert source is not None and "package-0, dram" in source.covers
    assert "misses" in source.covers and "screen" in source.covers
    first = source.read()
    assert first is not None and first.joules == 0.0 and first.watts is None
    set_energy(root, "intel-rapl:0", 1_000_000 + 4_500_000)  # +4.5 J in the package
    set_energy(root, "intel-rapl:0:2", 200_000 + 500_000)  # +0.5 J in DRAM
    # core, uncore (parts of the package), psys and the MMIO twin are not added
    for zone in ("intel-rapl:0:0", "intel-rapl:0:1", "intel-rapl:1", "intel-rapl-mmio:0"):
        set_energy(root, zone, 99_000_000)
    second = source.read()
    assert second is not None and second.joules == pytest.approx(5.0)


def test_intel_rapl_counter_wrap_around(tmp_path: Path) -> None:
    root = intel_laptop_tree(tmp_path)
    set_energy(root, "intel-rapl:0", RAPL_MAX_UJ - 2_000_000)  # 2 J before the wrap
    source = choose_power_source(SystemTree(root)).source
    assert source is not None
    t0 = source.read()
    set_energy(root, "intel-rapl:0", 3_000_000)  # wrapped: 2 J + 3 J later
    t1 = source.read()
    set_energy(root, "intel-rapl:0", 10_000_000)  # and 7 J more
    t2 = source.read()
    assert t0 and t1 and t2
    assert (t1.joules, t2.joules) == (pytest.approx(5.0), pytest.approx(12.0))
    # the corrected counter integrates: 5 J over the first second, 7 J over the next
    samples = [
        PowerSample(t=float(i), watts=None, joules=s.joules) for i, s in enumerate((t0, t1, t2))
    ]
    assert energy_between(samples, 0.0, 1.0) == pytest.approx(5.0)
    assert energy_between(samples, 0.5, 2.0) == pytest.approx(2.5 + 7.0)


def test_intel_rapl_unreadable_reading_is_a_gap(tmp_path: Path) -> None:
    root = intel_laptop_tree(tmp_path)
    source = choose_power_source(SystemTree(root)).source
    assert source is not None
    (root / "sys/class/powercap/intel-rapl:0/energy_uj").write_text("garbage\n")
    assert source.read() is None


def test_laptop_battery_discharging_power_now(tmp_path: Path) -> None:
    # as a user, RAPL is root-only: the discharging battery measures the machine
    root = intel_laptop_tree(tmp_path)
    choice = choose_power_source(UserTree(root))
    assert chosen(choice) == ("battery:BAT0", "battery")
    sample = choice.source.read()  # type: ignore[union-attr]
    assert sample is not None and sample.watts == pytest.approx(11.5) and sample.joules is None
    assert "only while discharging" in choice.source.covers  # type: ignore[union-attr]


def test_laptop_battery_current_times_voltage(tmp_path: Path) -> None:
    root = intel_laptop_tree(tmp_path)
    (root / "sys/class/power_supply/BAT0/power_now").unlink()
    # this gauge signs the current negative while discharging
    write(root, battery_files("Discharging", current_now=-812_000, voltage_now=15_400_000))
    source = choose_power_source(UserTree(root)).source
    assert source is not None and source.name == "battery:BAT0"
    sample = source.read()
    assert sample is not None and sample.watts == pytest.approx(0.812 * 15.4)


def test_battery_on_ac_does_not_measure_the_system(tmp_path: Path) -> None:
    root = intel_laptop_tree(tmp_path)
    source = choose_power_source(UserTree(root)).source
    assert source is not None
    write(root, battery_files("Charging"))  # plugged in during the run: a gap
    assert source.read() is None
    choice = choose_power_source(UserTree(root))
    assert choice.source is None
    assert choice.reason == (
        f"{NOT_PI5}; RAPL: /sys/class/powercap/intel-rapl:0/energy_uj is root-only since "
        "Linux 5.10 (permission denied); battery BAT0 Charging (only a discharging battery "
        "measures the system; on AC it does not); no hwmon power sensor"
    )


def test_battery_discharging_without_a_gauge_reading(tmp_path: Path) -> None:
    root = write(tmp_path, battery_files("Discharging", voltage_now=15_000_000))
    choice = choose_power_source(SystemTree(root))
    assert choice.source is None and "BAT0 discharging without power_now" in str(choice.reason)


def test_peripheral_batteries_are_not_the_machine(tmp_path: Path) -> None:
    base = "sys/class/power_supply/hidpp_battery_0/"
    files = {base + "type": "Battery\n", base + "scope": "Device\n"}
    files |= {base + "status": "Discharging\n", base + "power_now": "50000\n"}
    choice = choose_power_source(SystemTree(write(tmp_path, files)))
    assert choice.source is None and "no battery" in str(choice.reason)


# -- AMD desktop: RAPL present, not readable -----------------------------------------
def test_amd_rapl_root_only_is_none_with_the_file_named(tmp_path: Path) -> None:
    root = amd_desktop_tree(tmp_path)
    choice = choose_power_source(UserTree(root))
    assert choice.source is None and choice.log is None
    assert choice.reason == (
        f"{NOT_PI5}; RAPL: /sys/class/powercap/intel-rapl:0/energy_uj is root-only since "
        "Linux 5.10 (permission denied); no battery; no hwmon power sensor"
    )
    # as root the same counters are read
    source = choose_power_source(SystemTree(root)).source
    assert source is not None and source.name == "rapl" and "package-0)" in source.covers


def test_rapl_garbage_range_says_unreadable(tmp_path: Path) -> None:
    root = amd_desktop_tree(tmp_path)
    (root / "sys/class/powercap/intel-rapl:0/max_energy_range_uj").write_text("?\n")
    reason = choose_power_source(SystemTree(root)).reason
    assert (
        "RAPL: /sys/class/powercap/intel-rapl:0/energy_uj or its max_energy_range_uj "
        "unreadable (not a number)" in str(reason)
    )


# -- hwmon ----------------------------------------------------------------------------
def hwmon(n: int, name: str, **files: str) -> dict[str, str]:
    base = f"sys/class/hwmon/hwmon{n}/"
    return {base + "name": f"{name}\n"} | {base + key: f"{v}\n" for key, v in files.items()}


def test_hwmon_energy_socket_not_added_to_its_cores(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        hwmon(
            3,
            "amd_energy",
            energy1_input="5000000",
            energy1_label="Ecore000",
            energy2_input="7000000",
            energy2_label="Ecore001",
            energy17_input="20000000",
            energy17_label="Esocket0",
        ),
    )
    choice = choose_power_source(SystemTree(root))
    assert chosen(choice) == ("hwmon:amd_energy", "hwmon")
    source = choice.source
    assert source is not None and "Esocket0" in source.covers and "Ecore" not in source.covers
    assert source.read().joules == 0.0  # type: ignore[union-attr]
    write(root, hwmon(3, "amd_energy", energy17_input="23500000"))
    assert source.read().joules == pytest.approx(3.5)  # type: ignore[union-attr]
    write(root, hwmon(3, "amd_energy", energy17_input="100"))  # a reset: a gap
    assert source.read() is None
    write(root, hwmon(3, "amd_energy", energy17_input="1000100"))
    assert source.read().joules == pytest.approx(4.5)  # type: ignore[union-attr]


def test_hwmon_power_sensor(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        hwmon(0, "cpu_thermal", temp1_input="51000") | hwmon(2, "ina226", power1_input="4875000"),
    )
    source = choose_power_source(SystemTree(root)).source
    assert source is not None and source.name == "hwmon:ina226"
    sample = source.read()
    assert sample is not None and sample.watts == pytest.approx(4.875)


def test_hwmon_gpu_and_root_only_sensors_are_reasons(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        hwmon(1, "amdgpu", power1_average="35000000", power1_input="35000000")
        | hwmon(4, "amd_energy", energy1_input="1", energy1_label="Esocket0"),
    )
    (root / "sys/class/hwmon/hwmon4/energy1_input").chmod(0o400)
    reason = choose_power_source(UserTree(root)).reason
    assert str(reason).endswith(
        "hwmon: amdgpu measures a GPU only, "
        "/sys/class/hwmon/hwmon4/energy1_input is root-only (permission denied)"
    )


def test_this_machine_without_error() -> None:
    choice = choose_power_source()
    assert choice.log is None
    assert (choice.source is None) == (choice.reason is not None)
    if choice.source is None:
        assert "\n" not in str(choice.reason) and str(choice.reason).count("; ") == 3
