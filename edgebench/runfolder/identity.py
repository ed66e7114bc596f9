"""The device identity every reader uses: the run's own (format 2.8), or, for a run
written before it, one derived from the old device facts so old runs still group.

Placeholder until edgebench/system/identity.py (issue 21, part 3) lands with the
authoritative version of this module: same signature, same record, same id shapes.
"""

from __future__ import annotations

import hashlib
import json

from edgebench.runfolder.records import Device, DeviceIdentity

UNKNOWN_UNIT = "u-unknown-"


def short_hash(prefix: str, *parts: object) -> str:
    """`prefix` + 12 hex of sha256 over the parts (None kept apart from "None")."""
    text = json.dumps(list(parts), sort_keys=True, default=str)
    return prefix + hashlib.sha256(text.encode()).hexdigest()[:12]


def _gib(megabytes: int | None) -> int | None:
    return None if megabytes is None else round(megabytes / 1024)


def _model_label(device: Device) -> str:
    kind = device.board_model or device.cpu_model or device.machine or "unknown device"
    ram = _gib(device.ram_total_mb)
    return f"{kind} · {ram} GB" if ram is not None else kind


def identity_of(device: Device) -> DeviceIdentity:
    """The stored identity, or one from the facts a pre-2.8 run kept: no unit identifier
    was recorded then, so its unit id ("u-unknown-…") hashes the model and software
    facts, and two old runs on identical boards share it."""
    if device.identity is not None:
        return device.identity
    model_facts = (
        device.board_model or device.cpu_model,
        device.machine,
        _gib(device.ram_total_mb),
        device.logical_cores,
    )
    config_facts = (device.os, device.kernel, device.governor, device.build_features)
    model_id = short_hash("m", *model_facts)
    config_id = short_hash("c", *config_facts)
    unit_id = short_hash(UNKNOWN_UNIT, *model_facts, *config_facts)
    return DeviceIdentity(
        name=device.board_model or device.cpu_model or device.machine or "unknown device",
        hostname=None,
        unit_id=unit_id,
        unit_sources=[],
        model_id=model_id,
        model_label=_model_label(device),
        config_id=config_id,
        fingerprint=short_hash("d", unit_id, model_id, config_id),
    )
