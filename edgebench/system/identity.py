"""Which device a record belongs to (`device.identity`): the name the user gives it and
three short ids, each a sha256 over facts of the machine, and the fingerprint of all three.

    unit_id      this physical unit: every unit identifier readable (the SoC serial, the
                 DMI product UUID and board serial, which only root may read, and
                 /etc/machine-id). Two boards flashed from one SD image share machine-id
                 and hostname but not their SoC serial; two hosts on one board (mount
                 namespaces, containers) differ by machine-id.
    model_id     the kind of device: board model and CPU model, machine arch, RAM in
                 whole GiB, logical cores. Identical boards share it.
    config_id    the software the figures depend on: OS, kernel, cpufreq governor, and
                 the llama.cpp installed (version, install.sh's build and CMake flags,
                 read without loading it: the same for a GGUF and an ONNX run, so one
                 unit's runs of both backends are one device).
    fingerprint  unit_id + model_id + config_id.

Raw identifiers are hashed here and never returned or stored. Every hash starts with an
edgebench prefix, so an id cannot be matched with another program's hash of the same
machine-id (as machine-id(5) asks of applications). model_id and config_id are over fields
the device block records, so a run written before identities existed gets the same ones
(`edgebench.runfolder.identity.identity_of`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from edgebench.errors import UserError
from edgebench.system.tree import ROOT, SystemTree, parse_cpuinfo

ENV_NAME = "EDGEBENCH_DEVICE_NAME"
OPTION = "--device-name"
MAX_NAME = 64
_PREFIX = "edgebench-device-identity-v1"

_DT = "sys/firmware/devicetree/base/"
# (source, files tried in order): the first meaningful value of each source counts.
_UNIT_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("soc-serial", (_DT + "serial-number", "proc/device-tree/serial-number")),
    ("dmi-product-uuid", ("sys/class/dmi/id/product_uuid",)),
    ("dmi-board-serial", ("sys/class/dmi/id/board_serial",)),
    ("machine-id", ("etc/machine-id", "var/lib/dbus/machine-id")),
)
# Values firmware writes where a serial is not set: the same on every unit, so no id.
_PLACEHOLDERS = {
    "none",
    "n/a",
    "na",
    "not specified",
    "not applicable",
    "not available",
    "default string",
    "to be filled by o.e.m.",
    "system serial number",
    "0123456789",
    "123456789",
    "uninitialized",
    "03000200-0400-0500-0006-000700080009",  # a well-known placeholder UUID of AMI firmware
}
# Characters a name may not hold: control characters and line or paragraph separators.
_BAD_CATEGORIES = ("Cc", "Zl", "Zp")


def check_name(value: str, where: str) -> str:
    """A device name as given (surrounding spaces dropped), or a one-line error naming
    `where` (the option or the environment variable it came from)."""
    name = value.strip()
    if not name:
        raise UserError(f"{where}: the device name is empty; give one such as pi5-kitchen")
    if len(name) > MAX_NAME:
        raise UserError(
            f"{where} {name[:20]!r}...: the device name has {len(name)} characters; "
            f"at most {MAX_NAME}"
        )
    if any(unicodedata.category(c) in _BAD_CATEGORIES for c in name):
        raise UserError(f"{where} {name!r}: the device name holds a control character")
    if "/" in name:
        raise UserError(f"{where} {name!r}: the device name may not hold '/'")
    return name


def requested_name(option: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The name asked for: `--device-name`, else $EDGEBENCH_DEVICE_NAME, each checked;
    None when neither is given (the hostname names the device)."""
    if option is not None:
        return check_name(option, OPTION)
    value = environ.get(ENV_NAME)
    return check_name(value, ENV_NAME) if value is not None else None


def hostname(tree: SystemTree) -> str | None:
    """The kernel's hostname (this UTS namespace's); the real machine's from the socket
    library when /proc does not say."""
    name = tree.text("proc/sys/kernel/hostname")
    if not name and tree.root == ROOT:
        name = socket.gethostname()
    return name or None


def _meaningful(value: str | None) -> str | None:
    """An identifier as hashed (lower case, no NULs or spaces around), None for a
    placeholder: empty, all one character (0000..., ffff...), or a firmware default."""
    if value is None:
        return None
    text = value.replace("\x00", "").strip().lower()
    if text in _PLACEHOLDERS or len(set(text.replace("-", ""))) <= 1:
        return None
    return text


def unit_identifiers(tree: SystemTree) -> dict[str, str]:
    """source -> value of every unit identifier readable, in a fixed order. A root-only
    file read by another user is absent. The values stay in this module."""
    found: dict[str, str] = {}
    cpuinfo = parse_cpuinfo(tree.text("proc/cpuinfo") or "")
    serials = [block["serial"] for block in cpuinfo if "serial" in block]
    for source, paths in _UNIT_FILES:
        values = [tree.text(path) for path in paths]
        if source == "soc-serial":
            values = serials + values
        value = next((v for v in map(_meaningful, values) if v), None)
        if value is not None:
            found[source] = value
    return found


def short_hash(kind: str, parts: Iterable[Any]) -> str:
    """12 hex characters of sha256 over `kind` and `parts` as JSON, edgebench's prefix first."""
    text = json.dumps([_PREFIX, kind, *parts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def ram_gib(ram_total_mb: int | None) -> int | None:
    """MemTotal in whole GiB, rounded up: the kernel and firmware keep some of the
    installed RAM, so an 8 GB board reports about 7.9."""
    return math.ceil(ram_total_mb / 1024) if ram_total_mb else None


def model_of(facts: Mapping[str, Any]) -> tuple[str, str]:
    """(model_id, model_label) from the device block's facts. The CPU model is hashed
    beside the board's: a DMI name (a VM's, a desktop's mainboard) does not name the CPU."""
    kind = facts.get("board_model") or facts.get("cpu_model") or facts.get("machine")
    gib = ram_gib(facts.get("ram_total_mb"))
    parts = [
        facts.get("board_model"),
        facts.get("cpu_model"),
        facts.get("machine"),
        gib,
        facts.get("logical_cores"),
    ]
    label = " · ".join(p for p in (kind or "unknown device", f"{gib} GB" if gib else None) if p)
    return "m" + short_hash("model", parts), label


def config_of(facts: Mapping[str, Any]) -> str:
    """config_id from the device block's facts."""
    # The llama.cpp build as installed (known before any model loads, the same for a
    # GGUF and an ONNX run on this unit), not the features a loaded model reported.
    keys = ("os", "kernel", "governor", "llama_cpp_build")
    return "c" + short_hash("config", [facts.get(key) for key in keys])


def refresh(identity: Mapping[str, Any], facts: Mapping[str, Any]) -> dict[str, Any]:
    """`identity` (its name and unit) with the model, config and fingerprint of `facts`."""
    model_id, label = model_of(facts)
    config_id = config_of(facts)
    unit_id = identity["unit_id"]
    return {
        **identity,
        "model_id": model_id,
        "model_label": label,
        "config_id": config_id,
        "fingerprint": "d" + short_hash("fingerprint", [unit_id, model_id, config_id]),
    }


def read_identity(
    facts: Mapping[str, Any], tree: SystemTree, name: str | None = None
) -> dict[str, Any]:
    """The `identity` of the device block `facts` was read from `tree`. `name`: given by
    the user (checked already); else $EDGEBENCH_DEVICE_NAME, else the hostname. With no
    unit identifier readable at all (a container without machine-id), the hostname
    stands in for one (source "hostname")."""
    host = hostname(tree)
    identifiers = unit_identifiers(tree)
    if not identifiers and host:
        identifiers = {"hostname": host}
    unit_id = "u" + short_hash("unit", [f"{k}={v}" for k, v in identifiers.items()])
    identity = {
        "name": name or requested_name(None) or host or unit_id,
        "hostname": host,
        "unit_id": unit_id,
        "unit_sources": list(identifiers),
    }
    return refresh(identity, facts)
