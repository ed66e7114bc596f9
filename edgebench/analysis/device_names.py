"""A device as tables name it: the name it ran under and which unit it is ("pi5-a ·
u1a2b3c4d")."""

from __future__ import annotations

from edgebench.system.records import DeviceIdentity

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
