"""A device as tables name it: the name it ran under and which unit it is ("pi5-a ·
u1a2b3c4d"), and one name per run for `compare` and cards."""

from __future__ import annotations

from collections.abc import Sequence

from edgebench.runfolder.identity import identity_of
from edgebench.runfolder.records import Device, DeviceIdentity

# The unit id of a run written before devices had one (interface of identity_of).
UNKNOWN_UNIT = "u-unknown-"
# Characters of a unit id shown next to the device's name: "u" + 8 hex.
SHORT_UNIT = 9


def short_unit(identity: DeviceIdentity) -> str:
    """ "u1a2b3c4d"; an old run's derived unit id says it is unknown."""
    if identity.unit_id.startswith(UNKNOWN_UNIT):
        return "unit unknown"
    return identity.unit_id[:SHORT_UNIT]


def device_label(identity: DeviceIdentity) -> str:
    """ "pi5-a · u1a2b3c4d": the name the user gave and which unit it is."""
    return f"{identity.name} · {short_unit(identity)}"


def device_names(devices: Sequence[Device]) -> list[str]:
    """Each run's device by its name; with its unit id where two devices share a name."""
    identities = [identity_of(device) for device in devices]
    names: dict[str, set[str]] = {}
    for identity in identities:
        names.setdefault(identity.name, set()).add(identity.fingerprint)
    return [
        identity.name if len(names[identity.name]) == 1 else device_label(identity)
        for identity in identities
    ]
