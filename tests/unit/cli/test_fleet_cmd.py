"""`edgebench fleet run`: the user's mistakes end in one line with exit 2 before any host
is touched (a missing or bad inventory, no Ansible, a missing plan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.fleet import drive
from tests.helpers.cli import assert_one_line_error, run_cli


def test_a_missing_inventory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "fleet", "run", "plan.toml", "-i", str(tmp_path / "h.ini"))
    assert_one_line_error(code, err, "h.ini", "inventory not found")


def test_a_bad_inventory_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("[pis]\npi5-a ansible_host\n")
    code, err = run_cli(capsys, "fleet", "run", "plan.toml", "--inventory", str(inventory))
    assert_one_line_error(code, err, "hosts.ini:2", "ansible_host")


def test_no_inventory_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "fleet", "run", "plan.toml")
    assert_one_line_error(code, err, "--inventory")


def test_ansible_not_installed_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("pi5-a\n")
    monkeypatch.setattr(drive.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(drive.shutil, "which", lambda _: None)
    code, err = run_cli(capsys, "fleet", "run", "plan.toml", "-i", str(inventory))
    assert_one_line_error(code, err, "ansible-playbook not found", "edgebench[fleet]")


def test_a_missing_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("pi5-a\n")
    out = tmp_path / "out"
    code, err = run_cli(
        capsys, "fleet", "run", str(tmp_path / "plan.toml"), "-i", str(inventory), "-o", str(out)
    )
    assert_one_line_error(code, err, "plan.toml: plan file not found")


def test_a_plan_mistake_is_one_line_before_any_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("pi5-a\n")
    plan = tmp_path / "plan.toml"
    plan.write_text('models = ["smollm2-135m-instruct"]\nconstraints = ["nope"]\n')
    out = tmp_path / "out"
    code, err = run_cli(capsys, "fleet", "run", str(plan), "-i", str(inventory), "-o", str(out))
    assert_one_line_error(code, err, "plan.toml", "constraints")
    assert not out.exists()
