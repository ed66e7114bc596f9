"""`edgebench doctor` in words: one section per question, label and value per line."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from edgebench.report.bench_table import flags
from edgebench.runfolder.records import BenchRow
from edgebench.runtimes import LLAMA
from edgebench.system.device import throttle_events
from edgebench.system.records import Device

Section = tuple[str, list[tuple[str, str]]]


def throttle_words(throttling: dict[str, Any] | None) -> str:
    """'now: none; since boot: under-voltage, throttled (0x50005)' from the decoded flags."""
    if not throttling:
        return "not reported (a Raspberry Pi's firmware reports it)"
    events = throttle_events(throttling)
    now, since_boot = (", ".join(events[when]) or "none" for when in ("now", "since_boot"))
    return f"now: {now}; since boot: {since_boot} ({throttling.get('raw')})"


def _or_unknown(value: Any, unit: str = "") -> str:
    return "unknown" if value is None else f"{value}{unit}"


def _cpu(device: Device) -> str:
    cores = f"{_or_unknown(device.logical_cores)} logical"
    if device.physical_cores:
        cores += f" / {device.physical_cores} physical cores"
    vm = ", virtual machine" if device.hypervisor else ""
    vendor = f" ({device.cpu_vendor})" if device.cpu_vendor else ""
    return f"{_or_unknown(device.cpu_model)}{vendor}, {cores}{vm}"


def _temperature(device: Device) -> str:
    if device.cpu_temp_c is None:
        return "not reported (no CPU thermal zone or sensor)"
    return f"{device.cpu_temp_c:.1f} °C ({device.cpu_temp_sensor})"


def _zones(device: Device) -> str:
    zones = device.thermal_zones or {}
    return ", ".join(f"{name} {temp:.1f} °C" for name, temp in zones.items()) or "none"


def _memory(device: Device) -> str:
    available, total = device.ram_available_mb, device.ram_total_mb
    swap = device.swap_total_mb
    return f"{_or_unknown(available)} MB available of {_or_unknown(total)} MB, swap {swap} MB"


def _clock(device: Device) -> str:
    return (
        f"now {_or_unknown(device.cpu_cur_mhz, ' MHz')}, "
        f"max {_or_unknown(device.cpu_max_mhz, ' MHz')}"
    )


def _identity(device: Device) -> str:
    identity = device.identity
    if identity is None:
        return "unknown"
    sources = ", ".join(identity.unit_sources) or "no unit identifier readable"
    return f"{identity.name} · {identity.fingerprint} (unit from {sources})"


def device_section(device: Device) -> Section:
    rows = [
        ("name", _identity(device)),
        ("board", _or_unknown(device.board_model)),
        ("CPU", _cpu(device)),
        ("CPU features", " ".join(device.cpu_simd or []) or "unknown"),
        ("memory", _memory(device)),
        ("governor", device.governor or "not reported (no cpufreq)"),
        ("clock", _clock(device)),
        ("temperature", _temperature(device)),
        ("thermal zones", _zones(device)),
        ("throttling", throttle_words(device.throttling)),
        ("load", f"{_or_unknown(device.load_avg_1m)} (1-minute average)"),
        ("OS", f"{_or_unknown(device.os)}, kernel {_or_unknown(device.kernel)}"),
    ]
    return "device", rows


def build_section(device: Device, build_error: str | None) -> Section:
    # the runtime's facts are the backend's own (free-form): read as it reports them
    runtime = device.runtime
    if runtime is None:
        return "llama.cpp build", [("error", build_error or "unknown")]
    version = f"{LLAMA.package} {runtime.get(LLAMA.version_key)}"  # doctor asks llama.cpp
    if runtime.get("ggml_version"):
        version += f", ggml {runtime['ggml_version']} ({runtime.get('ggml_commit')})"
    missing = device.build_missing
    rows = [
        ("version", version),
        ("uses", " ".join(device.build_features or []) or "no CPU features listed"),
        (
            "missing",
            "unknown" if missing is None else ", ".join(missing) or "nothing this CPU has",
        ),
    ]
    if device.build_hint:
        rows.append(("hint", device.build_hint))
    return "llama.cpp build", rows


class ProbeView(Protocol):
    """The speed probe as doctor/diagnose.py's `Probe` holds it."""

    status: str  # measured, skipped, unavailable or failed
    message: str | None  # why there is no figure, and what to do
    model: str | None
    threads: int | None
    load_s: float | None
    row: dict[str, Any] | None  # `SpeedResult.to_dict()`: a bench row without its threads


def probe_section(probe: ProbeView) -> Section:
    if probe.status != "measured" or probe.row is None or probe.threads is None:
        return "speed probe", [(probe.status, probe.message or "")]
    row = BenchRow.from_json({"threads": probe.threads, **probe.row})
    spread = f" ± {row.tok_s_std:.1f}" if row.tok_s_std is not None else ""
    load = f"{probe.load_s:.2f} s" if probe.load_s is not None else "unknown"
    rows = [
        ("model", f"{probe.model}, {probe.threads} threads, load {load}"),
        (
            row.test,
            f"{row.tok_s_mean or 0:.1f}{spread} tok/s "
            f"(mean ± std of {row.repetitions} repetitions, {sum(row.seconds):.1f} s)",
        ),
    ]
    rows += [("not clean", reason) for reason in flags(row)]
    return "speed probe", rows


class RuntimeView(Protocol):
    """An optional runtime's facts as doctor/runtime_facts.py's `RuntimeFacts` holds them."""

    label: str
    rows: dict[str, str]  # label -> value, as the runtime's backend words them


def doctor_sections(
    device: Device,
    build_error: str | None,
    probe: ProbeView,
    runtimes: Iterable[RuntimeView] = (),
) -> list[Section]:
    """The sections `edgebench doctor` prints (doctor/diagnose.py's `DoctorReport`)."""
    return [
        device_section(device),
        build_section(device, build_error),
        *((r.label, list(r.rows.items())) for r in runtimes),
        probe_section(probe),
    ]


def doctor_text(
    device: Device,
    build_error: str | None,
    probe: ProbeView,
    runtimes: Iterable[RuntimeView] = (),
) -> str:
    """Plain text: a heading per section, its rows as `label  value` aligned."""
    lines: list[str] = []
    for title, rows in doctor_sections(device, build_error, probe, runtimes):
        lines.append(title)
        width = max(len(label) for label, _ in rows)
        lines += [f"  {label.ljust(width)}  {value}" for label, value in rows]
    return "\n".join(lines) + "\n"
