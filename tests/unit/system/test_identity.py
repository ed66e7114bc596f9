"""The device's identity from fake /proc and /sys trees: which unit (identical boards and
cloned SD cards told apart), which kind of device, which software; the name by option,
environment and hostname; raw serials never in the record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.system.device import device_info
from edgebench.system.identity import ENV_NAME, read_identity, refresh, requested_name
from edgebench.system.tree import SystemTree
from tests.helpers.device_trees import (
    LAPTOP_DMI_IDS,
    PI5_SERIAL,
    UserTree,
    laptop_tree,
    pi5_tree,
    write,
)

OTHER_SERIAL = "10000000fedcba98"
ID = {key: re.compile(rf"{key[0]}[0-9a-f]{{12}}") for key in ("unit_id", "model_id", "config_id")}


@pytest.fixture(autouse=True)
def _no_name_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_NAME, raising=False)


def identity(root: Path, tree: SystemTree | None = None, name: str | None = None) -> dict:
    return device_info(4, root=root, runner=None, name=name, tree=tree).to_json()["identity"]


def test_two_pi5_boards_flashed_from_one_image_are_two_units_of_one_model(
    tmp_path: Path,
) -> None:
    first = identity(pi5_tree(tmp_path, "a"))
    second = identity(pi5_tree(tmp_path, "b", serial=OTHER_SERIAL))
    # same machine-id and hostname (one SD image), another SoC serial
    assert first["hostname"] == second["hostname"] == "raspberrypi"
    assert first["unit_sources"] == second["unit_sources"] == ["soc-serial", "machine-id"]
    assert first["unit_id"] != second["unit_id"]
    assert first["model_id"] == second["model_id"]
    assert first["config_id"] == second["config_id"]
    assert first["fingerprint"] != second["fingerprint"]
    assert first["model_label"] == "Raspberry Pi 5 Model B Rev 1.0 · 8 GB"
    for key, pattern in ID.items():
        assert pattern.fullmatch(first[key]), first[key]
    assert re.fullmatch(r"d[0-9a-f]{12}", first["fingerprint"])


def test_the_same_tree_read_twice_is_the_same_identity(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path)
    assert identity(root) == identity(root)


def test_raw_identifiers_are_never_in_the_record(tmp_path: Path) -> None:
    root = laptop_tree(tmp_path)
    text = json.dumps(identity(root, SystemTree(root)))
    pi = json.dumps(identity(pi5_tree(tmp_path)))
    secrets = [PI5_SERIAL, *(v.strip() for v in LAPTOP_DMI_IDS.values())]
    secrets += [(root / "etc/machine-id").read_text().strip()]
    assert not any(secret.lower() in (text + pi).lower() for secret in secrets)


def test_a_laptop_read_by_a_user_has_machine_id_only(tmp_path: Path) -> None:
    root = laptop_tree(tmp_path)
    as_user = identity(root, UserTree(root))  # the DMI ids are root-only (0400)
    assert as_user["unit_sources"] == ["machine-id"]
    assert as_user["model_label"] == "LENOVO 21CB0078GE · 16 GB"
    as_root = identity(root, SystemTree(root))
    assert as_root["unit_sources"] == ["dmi-product-uuid", "dmi-board-serial", "machine-id"]
    assert as_root["unit_id"] != as_user["unit_id"]  # more went into it
    assert as_root["model_id"] == as_user["model_id"]


def test_two_hosts_on_one_machine_differ_by_machine_id(tmp_path: Path) -> None:
    """The fleet test's two "hosts": one board, each with its own /etc/machine-id (bind
    mounted) and hostname."""
    root = pi5_tree(tmp_path)
    first = identity(root)
    write(root, {"etc/machine-id": "99999999999999999999999999999990\n"})
    write(root, {"proc/sys/kernel/hostname": "host-b\n"})
    second = identity(root)
    assert first["unit_id"] != second["unit_id"]
    assert second["name"] == second["hostname"] == "host-b"
    assert first["model_id"] == second["model_id"]


def test_placeholder_serials_identify_nothing(tmp_path: Path) -> None:
    root = laptop_tree(tmp_path)
    write(root, {"sys/class/dmi/id/product_uuid": "00000000-0000-0000-0000-000000000000\n"})
    write(root, {"sys/class/dmi/id/board_serial": "To Be Filled By O.E.M.\n"})
    assert identity(root, SystemTree(root))["unit_sources"] == ["machine-id"]
    pi = pi5_tree(tmp_path, serial="0000000000000000")
    assert identity(pi)["unit_sources"] == ["machine-id"]


def test_with_no_unit_identifier_the_hostname_stands_in(tmp_path: Path) -> None:
    """A container without machine-id: its hostname is all there is."""
    root = pi5_tree(tmp_path, serial="0000000000000000")
    (root / "etc/machine-id").unlink()
    (root / "sys/firmware/devicetree/base/serial-number").unlink()
    assert identity(root)["unit_sources"] == ["hostname"]


def test_the_config_follows_the_software_the_unit_and_model_do_not(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path)
    facts = device_info(4, root=root, runner=None).to_json()
    before = facts["identity"]
    # llama.cpp rebuilt with other flags: another config
    after = refresh(before, {**facts, "llama_cpp_build": "0.3.36 native -DGGML_NATIVE=ON"})
    assert after["config_id"] != before["config_id"]
    assert after["fingerprint"] != before["fingerprint"]
    assert (after["unit_id"], after["model_id"]) == (before["unit_id"], before["model_id"])
    # what a loaded model reports of the build does not change it (an ONNX run has none)
    loaded = refresh(before, {**facts, "build_features": ["NEON", "ARM_FMA"]})
    assert loaded["config_id"] == before["config_id"]
    write(root, {"proc/sys/kernel/osrelease": "6.12.0-rpi-2712\n"})
    kernel = identity(root)
    assert kernel["config_id"] != before["config_id"]
    assert kernel["unit_id"] == before["unit_id"]


def test_the_name_is_the_option_else_the_environment_else_the_hostname(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = pi5_tree(tmp_path)
    assert identity(root)["name"] == "raspberrypi"
    monkeypatch.setenv(ENV_NAME, "pi5-kitchen")
    assert identity(root)["name"] == "pi5-kitchen"
    assert identity(root, name="pi5-desk")["name"] == "pi5-desk"
    # the name is a label: the ids do not change with it
    assert identity(root, name="pi5-desk")["fingerprint"] == identity(root)["fingerprint"]
    assert requested_name("pi5-desk", {ENV_NAME: "x"}) == "pi5-desk"
    assert requested_name(None, {ENV_NAME: " pi5-kitchen "}) == "pi5-kitchen"
    assert requested_name(None, {}) is None


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "the device name is empty"),
        ("   ", "the device name is empty"),
        ("x" * 65, "65 characters; at most 64"),
        ("pi\x1b[31m", "control character"),
        ("pi\nfive", "control character"),
        ("lab/pi5", "may not hold '/'"),
    ],
)
def test_a_bad_name_is_one_line_naming_where_it_came_from(name: str, fragment: str) -> None:
    with pytest.raises(UserError) as option:
        requested_name(name, {})
    assert str(option.value).startswith("--device-name") and fragment in str(option.value)
    with pytest.raises(UserError) as env:
        requested_name(None, {ENV_NAME: name})
    assert str(env.value).startswith(ENV_NAME) and fragment in str(env.value)
    for error in (option.value, env.value):
        assert "\n" not in str(error)


def test_the_longest_name_is_accepted() -> None:
    assert requested_name("p" * 64, {}) == "p" * 64


def test_read_identity_is_what_the_device_block_holds(tmp_path: Path) -> None:
    root = pi5_tree(tmp_path)
    facts = device_info(4, root=root, runner=None).to_json()
    assert read_identity(facts, SystemTree(root)) == facts["identity"]
