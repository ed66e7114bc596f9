"""The identity of a recorded device, for every reader (database, reports, compare):
the stored one, or for a run written before format 2.8 one derived from its device block."""

from __future__ import annotations

from edgebench.runtimes import LLAMA
from edgebench.system.build_flags import describe_build
from edgebench.system.identity import model_of, refresh, short_hash
from edgebench.system.records import Device, DeviceIdentity

# The facts of an old device block that stay the same from run to run on one machine
# (no temperatures, clocks, load or free memory): what tells its unit apart, as well as
# anything can without a serial.
_STABLE_FACTS = (
    "board_model",
    "cpu_model",
    "cpu_vendor",
    "cpu_flags",
    "machine",
    "logical_cores",
    "physical_cores",
    "cpu_max_mhz",
    "ram_total_mb",
    "swap_total_mb",
    "hypervisor",
    "os",
    "kernel",
    "governor",
)


def identity_of(device: Device) -> DeviceIdentity:
    """The device's identity. Before format 2.8 there is none stored: model_id and
    config_id are computed from the same fields as a new run's (so they match; the
    llama.cpp build from the runtime the run loaded, as it was installed); the unit
    is unknown, "u-unknown-<hash of the stable facts>", and the name the model label."""
    if device.identity is not None:
        return device.identity
    facts = device.to_json()
    runtime = device.runtime or {}
    if runtime.get("edgebench_build"):  # the llama.cpp it loaded, as a new run records it
        version = runtime.get(LLAMA.version_key) or "unknown version"
        build = describe_build(version, runtime["edgebench_build"], runtime.get("cmake_args"))
        facts["llama_cpp_build"] = build
    stable = [facts.get(key) for key in _STABLE_FACTS]
    unit = {
        "name": model_of(facts)[1],
        "hostname": None,
        "unit_id": "u-unknown-" + short_hash("unit-fallback", stable),
        "unit_sources": [],
    }
    return DeviceIdentity.from_json(refresh(unit, facts))


def short_fingerprint(fingerprint: str) -> str:
    """A fingerprint as tables show it: "d" and 7 hex characters, as git shortens."""
    return fingerprint[:8]


def device_tag(device: Device) -> str:
    """ "pi5-a · d1a2b3c4": the device's name and short fingerprint."""
    identity = identity_of(device)
    return name_tag(identity.name, identity.fingerprint)


def name_tag(name: str, fingerprint: str) -> str:
    """ "pi5-a · d1a2b3c4": a device name and its short fingerprint, as tables show it."""
    return f"{name} · {short_fingerprint(fingerprint)}"
