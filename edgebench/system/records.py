"""The device block as records: what `system.device.device_info` reads and returns, as
manifest.json and bench.json hold it (published with the run-folder format)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.record import Record


@dataclass(frozen=True)
class DeviceIdentity(Record):
    """Which device the figures belong to (format 2.8): a name and short ids, each
    12 hex characters of a sha256 (system/identity.py). Raw serials are never stored."""

    name: str  # --device-name, else $EDGEBENCH_DEVICE_NAME, else the hostname
    hostname: str | None  # the kernel's hostname
    # "u" + hash of every unit identifier readable (`unit_sources`): this physical unit,
    # told apart from identical boards and from cloned SD cards; stable across runs
    unit_id: str
    # soc-serial, dmi-product-uuid, dmi-board-serial (root-only), machine-id; hostname
    # only when none of them is readable
    unit_sources: list[str]
    # "m" + hash of the kind of device: board and CPU model, arch, RAM in whole GiB,
    # logical cores (identical boards share it)
    model_id: str
    model_label: str  # the kind of device in words: "Raspberry Pi 5 Model B Rev 1.0 · 8 GB"
    # "c" + hash of the software the figures depend on: OS, kernel, governor, llama.cpp's
    # build features (after the first llama.cpp model loaded)
    config_id: str
    fingerprint: str  # "d" + hash of unit_id, model_id and config_id


@dataclass(frozen=True)
class Device(Record):
    """The machine, read before the model loads (`runtime` after the first load)."""

    cpu_model: str | None = None  # from /proc/cpuinfo (or the ARM part number)
    cpu_vendor: str | None = None  # vendor id, or the ARM implementer
    cpu_flags: list[str] | None = None  # every CPU flag the kernel reports
    cpu_simd: list[str] | None = None  # SIMD extensions among the CPU flags
    hypervisor: bool | None = None  # a VM: x86 CPU flag, DMI name, /sys/hypervisor, systemd
    logical_cores: int | None = None  # CPUs online
    physical_cores: int | None = None  # distinct cores (hyper-threads share one)
    threads_used: int | None = None  # threads the model ran with
    governor: str | None = None  # cpufreq scaling governor(s)
    cpu_max_mhz: int | None = None  # highest CPU clock
    ram_total_mb: int | None = None  # MemTotal
    ram_available_mb: int | None = None  # MemAvailable before the model loaded
    swap_total_mb: int | None = None  # SwapTotal
    os: str | None = None  # PRETTY_NAME of /etc/os-release
    kernel: str | None = None  # kernel release
    machine: str | None = None  # x86_64, aarch64 ...
    board_model: str | None = None  # device-tree model (Raspberry Pi) or DMI name
    power_source: str | None = None  # ac or battery, when reported
    cpu_temp_c: float | None = None  # CPU or SoC temperature before the run
    cpu_temp_sensor: str | None = None  # where the temperature was read
    throttling: dict[str, Any] | None = None  # Raspberry Pi firmware flags
    cpu_cur_mhz: int | None = None  # CPU clock before the run
    thermal_zones: dict[str, float] | None = None  # every thermal zone's °C before the run
    load_avg_1m: float | None = None  # 1-minute load average before the run
    cpus_allowed: int | None = None  # CPUs this process may run on
    platform: str | None = None  # Python's platform string
    python: str | None = None  # Python version
    python_implementation: str | None = None  # CPython, PyPy ...
    runtime: dict[str, Any] | None = None  # the inference library's name, version and build
    # llama.cpp's CPU features (its system info, parsed), with `runtime`:
    build_features: list[str] | None = None  # the features the build uses (AVX2, DOTPROD ...)
    build_missing: list[str] | None = None  # CPU features (/proc/cpuinfo names) it does not
    build_hint: str | None = None  # how to rebuild it for them, when some are missing
    # the llama.cpp installed here, read without loading it: version, install.sh's build
    # and CMake flags (else its CPU library's sha256); the same for a GGUF and an ONNX run
    llama_cpp_build: str | None = None
    # which device this is (format 2.8; None before: `runfolder.identity.identity_of`
    # derives one from the fields above)
    identity: DeviceIdentity | None = None
