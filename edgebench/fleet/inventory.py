"""The hosts of an Ansible INI inventory, checked before Ansible starts.

Ansible reads the inventory itself; this reads it first so a missing file or a line
Ansible would refuse is one line naming the file and line, before any host is touched,
and so `fleet run` knows which hosts to expect in its table.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import UserError
from edgebench.readback import present, read_text

# An inventory names hosts, a line each: a few KB.
MAX_INVENTORY_BYTES = 1 << 20

# `[group]`, `[group:vars]`, `[group:children]`.
_SECTION = re.compile(r"^\[([A-Za-z0-9_.-]+)(?::(vars|children))?\]$")
# A host name as `fleet run` uses it for a folder name too: no '/', no leading dot.
_HOST = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@\[\]-]*$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Connection variables that are wrong when empty, with an example value for the error.
_NEEDS_VALUE = {
    "ansible_host": "192.168.1.20",
    "ansible_user": "pi",
    "ansible_port": "22",
    "ansible_ssh_private_key_file": "~/.ssh/id_ed25519",
    "edgebench_root": "~/edgebench",
}


@dataclass(frozen=True)
class Inventory:
    path: Path
    hosts: tuple[str, ...]  # inventory_hostname of every host, in file order, once each


def read_inventory(path: Path) -> Inventory:
    """The hosts of the INI inventory at `path`; a UserError naming file and line for a
    line that is not a section, a host with `key=value` variables, or a variable."""
    if not present(path):
        raise UserError(f"{path}: inventory not found (an Ansible INI file: one host a line)")
    # bounded: a FIFO or a device is one line saying what it is, not a hang
    text = read_text(path, "the inventory", MAX_INVENTORY_BYTES)
    hosts: list[str] = []
    kind = "hosts"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        where = f"{path}:{number}"
        section = _SECTION.match(line)
        if line.startswith("["):
            if not section:
                raise UserError(
                    f"{where}: '{line}' is not a [group], [group:vars] or [group:children] heading"
                )
            kind = section.group(2) or "hosts"
            continue
        if kind == "children":
            continue  # group names; Ansible checks they exist
        if kind == "vars":  # `key=value` or `key = value`, the value as written
            key, equals, _ = line.partition("=")
            if not equals or not _VARIABLE.match(key.strip()):
                raise UserError(f"{where}: '{line}' is not a variable (key=value)")
            continue
        name, *variables = _split(line, where)
        if not _HOST.match(name) or name in (".", ".."):
            raise UserError(f"{where}: '{name}' is not a host name (letters, digits, . _ - :)")
        _check_variables(variables, where)
        if name not in hosts:
            hosts.append(name)
    if not hosts:
        raise UserError(
            f"{path}: no hosts in the inventory (one host a line, e.g. "
            "'pi5-a ansible_host=192.168.1.20')"
        )
    return Inventory(path=path, hosts=tuple(hosts))


def _split(line: str, where: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError as exc:
        raise UserError(f"{where}: {exc} in '{line}'") from None


def _check_variables(words: list[str], where: str) -> None:
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not _VARIABLE.match(key):
            raise UserError(f"{where}: '{word}' is not a variable (key=value after the host)")
        if key in _NEEDS_VALUE and not value:
            # Ansible takes `ansible_host=` as a host named "": its error comes much later
            raise UserError(f"{where}: {key} has no value (e.g. {key}={_NEEDS_VALUE[key]})")
