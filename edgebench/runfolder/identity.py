"""The device identity of a run, for readers (db, report): `identity_of(device)`.

Placeholder until the device-identity work (issue 21, part 3) lands: it keeps the
interface (`identity_of(device: Device) -> DeviceIdentity`) and returns the stored
identity when the record carries one, else one derived from the older Device fields.
The merge keeps part 3's version of this file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from edgebench.runfolder.records import Device


@dataclass(frozen=True)
class DeviceIdentity:
    """Who measured: the fields of interface A (part 3 makes this a record)."""

    name: str
    unit_id: str
    model_id: str
    model_label: str
    config_id: str
    fingerprint: str
    hostname: str | None = None
    unit_sources: list[str] = field(default_factory=list)


def _hash(prefix: str, values: object) -> str:
    text = json.dumps(values, sort_keys=True, default=str)
    return prefix + hashlib.sha256(text.encode()).hexdigest()[:12]


def _model_label(device: Device) -> str:
    kind = device.board_model or device.cpu_model or device.machine or "unknown device"
    ram = f" · {round(device.ram_total_mb / 1024)} GB" if device.ram_total_mb else ""
    return f"{kind}{ram}"


def identity_of(device: Device) -> DeviceIdentity:
    """The stored identity, or one derived from the Device fields of an older run (no
    unit identifiers were read then: units of one kind of device cannot be told apart)."""
    stored = getattr(device, "identity", None)
    if stored is not None:
        return stored
    ram_gib = round(device.ram_total_mb / 1024) if device.ram_total_mb else None
    kind = [device.board_model or device.cpu_model, device.machine, ram_gib, device.logical_cores]
    model_id = _hash("m", kind)
    config_id = _hash("c", [device.os, device.kernel, device.governor, device.build_features])
    unit_id = "u-unknown-" + _hash("", [kind, device.cpu_flags, device.cpus_allowed])
    label = _model_label(device)
    return DeviceIdentity(
        name=label,
        unit_id=unit_id,
        model_id=model_id,
        model_label=label,
        config_id=config_id,
        fingerprint=_hash("d", [unit_id, model_id, config_id]),
    )
