"""The inventory check: the hosts `fleet run` expects, and a line Ansible would refuse
as one line naming file and line, before any host is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.fleet.inventory import read_inventory

GOOD = """# two Pis and a laptop
[pis]
pi5-a ansible_host=192.168.1.20 ansible_user=pi edgebench_env='{"A": "b c"}'
pi5-b ansible_host=192.168.1.21

[pis:vars]
ansible_user = pi
edgebench_root=~/bench

[laptops]
laptop.local
pi5-a

[all:children]
pis
"""


def test_hosts_in_file_order_once_each(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(GOOD)
    assert read_inventory(path).hosts == ("pi5-a", "pi5-b", "laptop.local")


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("[pis\npi5-a\n", ["hosts.ini:1", "[pis"]),
        ("[pis]\npi5-a ansible_host\n", ["hosts.ini:2", "'ansible_host' is not a variable"]),
        ("[pis]\npi5-a 1x=2\n", ["hosts.ini:2", "'1x=2'"]),
        ("[pis:vars]\nansible_user\n", ["hosts.ini:2", "'ansible_user' is not a variable"]),
        ("[pis]\n../evil\n", ["hosts.ini:2", "'../evil' is not a host name"]),
        ("[pis]\npi5-a x='open\n", ["hosts.ini:2", "quotation"]),
        ("# nothing\n[pis]\n", ["hosts.ini", "no hosts"]),
        ("[pis]\npi5-a ansible_host=\n", ["hosts.ini:2", "ansible_host has no value"]),
        ("[pis]\npi5-a ansible_user= edgebench_root=/x\n", ["hosts.ini:2", "ansible_user"]),
    ],
)
def test_a_bad_inventory_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, fragments: list[str]
) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(text)
    with pytest.raises(UserError) as error:
        read_inventory(path)
    message = str(error.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_missing_or_unreadable_inventory(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="inventory not found"):
        read_inventory(tmp_path / "nope.ini")
    binary = tmp_path / "hosts.ini"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match=r"hosts.ini:1: not UTF-8 text"):
        read_inventory(binary)


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_an_inventory_that_is_not_a_regular_file_is_one_line(tmp_path: Path, kind: str) -> None:
    """A FIFO or a link to /dev/zero was read whole (a hang, or memory without end) or
    taken for a missing file."""
    path = tmp_path / "hosts.ini"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(UserError, match=r"hosts.ini: the inventory is (a link to )?a "):
        read_inventory(path)
