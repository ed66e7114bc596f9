"""`edgebench doctor` in words: one section per question, label and value per line."""

from __future__ import annotations

from typing import Any

from edgebench.report.bench_table import flags
from edgebench.runtimes import LLAMA
from edgebench.system.device import throttle_events

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


def _cpu(device: dict[str, Any]) -> str:
    cores = f"{_or_unknown(device.get('logical_cores'))} logical"
    if device.get("physical_cores"):
        cores += f" / {device['physical_cores']} physical cores"
    vm = ", virtual machine" if device.get("hypervisor") else ""
    vendor = f" ({device['cpu_vendor']})" if device.get("cpu_vendor") else ""
    return f"{_or_unknown(device.get('cpu_model'))}{vendor}, {cores}{vm}"


def _temperature(device: dict[str, Any]) -> str:
    temp = device.get("cpu_temp_c")
    if temp is None:
        return "not reported (no CPU thermal zone or sensor)"
    return f"{temp:.1f} °C ({device.get('cpu_temp_sensor')})"


def _zones(device: dict[str, Any]) -> str:
    zones = device.get("thermal_zones") or {}
    return ", ".join(f"{name} {temp:.1f} °C" for name, temp in zones.items()) or "none"


def _memory(device: dict[str, Any]) -> str:
    available, total = device.get("ram_available_mb"), device.get("ram_total_mb")
    swap = device.get("swap_total_mb")
    return f"{_or_unknown(available)} MB available of {_or_unknown(total)} MB, swap {swap} MB"


def _clock(device: dict[str, Any]) -> str:
    return (
        f"now {_or_unknown(device.get('cpu_cur_mhz'), ' MHz')}, "
        f"max {_or_unknown(device.get('cpu_max_mhz'), ' MHz')}"
    )


def _identity(device: dict[str, Any]) -> str:
    identity = device.get("identity")
    if not identity:
        return "unknown"
    sources = ", ".join(identity["unit_sources"]) or "no unit identifier readable"
    return f"{identity['name']} · {identity['fingerprint']} (unit from {sources})"


def device_section(device: dict[str, Any]) -> Section:
    rows = [
        ("name", _identity(device)),
        ("board", _or_unknown(device.get("board_model"))),
        ("CPU", _cpu(device)),
        ("CPU features", " ".join(device.get("cpu_simd") or []) or "unknown"),
        ("memory", _memory(device)),
        ("governor", device.get("governor") or "not reported (no cpufreq)"),
        ("clock", _clock(device)),
        ("temperature", _temperature(device)),
        ("thermal zones", _zones(device)),
        ("throttling", throttle_words(device.get("throttling"))),
        ("load", f"{_or_unknown(device.get('load_avg_1m'))} (1-minute average)"),
        ("OS", f"{_or_unknown(device.get('os'))}, kernel {_or_unknown(device.get('kernel'))}"),
    ]
    return "device", rows


def build_section(device: dict[str, Any], build_error: str | None) -> Section:
    runtime = device.get("runtime")
    if runtime is None:
        return "llama.cpp build", [("error", build_error or "unknown")]
    version = f"{LLAMA.package} {runtime.get(LLAMA.version_key)}"  # doctor asks llama.cpp
    if runtime.get("ggml_version"):
        version += f", ggml {runtime['ggml_version']} ({runtime.get('ggml_commit')})"
    missing = device.get("build_missing")
    rows = [
        ("version", version),
        ("uses", " ".join(device.get("build_features") or []) or "no CPU features listed"),
        (
            "missing",
            "unknown" if missing is None else ", ".join(missing) or "nothing this CPU has",
        ),
    ]
    if device.get("build_hint"):
        rows.append(("hint", device["build_hint"]))
    return "llama.cpp build", rows


def probe_section(probe: dict[str, Any]) -> Section:
    row = probe.get("result")
    if probe["status"] != "measured" or row is None:
        return "speed probe", [(probe["status"], probe.get("message") or "")]
    spread = f" ± {row['tok_s_std']:.1f}" if row.get("tok_s_std") is not None else ""
    rows = [
        ("model", f"{probe['model']}, {probe['threads']} threads, load {probe['load_s']:.2f} s"),
        (
            row["test"],
            f"{row['tok_s_mean']:.1f}{spread} tok/s "
            f"(mean ± std of {row['repetitions']} repetitions, {sum(row['seconds']):.1f} s)",
        ),
    ]
    rows += [("not clean", reason) for reason in flags(row)]
    return "speed probe", rows


def doctor_sections(report: dict[str, Any]) -> list[Section]:
    """The sections `edgebench doctor` prints, from its JSON (`DoctorReport.to_dict`)."""
    device = report["device"]
    return [
        device_section(device),
        build_section(device, report.get("build_error")),
        probe_section(report["probe"]),
    ]


def doctor_text(report: dict[str, Any]) -> str:
    """Plain text: a heading per section, its rows as `label  value` aligned."""
    lines: list[str] = []
    for title, rows in doctor_sections(report):
        lines.append(title)
        width = max(len(label) for label, _ in rows)
        lines += [f"  {label.ljust(width)}  {value}" for label, value in rows]
    return "\n".join(lines) + "\n"
