"""A stored setting is data, never a command (issue "code execution from a shared
folder"): `--resume` and `plan run` never take `--power-command` from a run folder. A run
that used one continues only with the same command given again; a folder that names one
(crafted, copied, fetched) runs nothing and is a one-line error naming the option."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.plan import execute
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.plan_runs import Launches, write_plan
from tests.helpers.run_folder import manifest_of

QUIET = ("--idle-baseline", "0")


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    made = roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}, {"b": [2]}, {"c": 3}])
    made.answer_with(FakeBackend(echo=True))
    return made


def meter(tmp_path: Path, name: str = "meter.sh") -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\necho 4.5 W\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def plant(run_dir: Path, command: str | None) -> None:
    """The folder as someone else left it: unfinished, with `command` in its settings."""
    manifest = manifest_of(run_dir)
    manifest["status"] = "interrupted"
    manifest["settings"]["power_command"] = command
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_command_planted_in_a_run_folder_is_never_run(cli: RoundtripCli, tmp_path: Path) -> None:
    assert cli.start("run", *QUIET)[0] == 0
    marker = tmp_path / "pwned"
    plant(cli.out, f"touch {marker}")
    code, err = cli.resume("run")
    assert_one_line_error(
        code,
        err,
        f"cannot resume {cli.out}: it polled a power meter with --power-command",
        "give --power-command CMD again",
    )
    assert not marker.exists()
    assert manifest_of(cli.out)["resumes"] == []


def test_resume_asks_for_the_command_again_and_refuses_another(
    cli: RoundtripCli, tmp_path: Path
) -> None:
    command = meter(tmp_path)
    assert cli.start("run", "--power-command", command, *QUIET)[0] == 0
    plant(cli.out, command)
    code, err = cli.resume("run")
    assert_one_line_error(code, err, "give --power-command CMD again")
    other = meter(tmp_path, "other.sh")
    code, err = cli.resume("run", "--power-command", other)
    assert_one_line_error(
        code,
        err,
        f"cannot resume {cli.out}: setting --power-command differs "
        f"(run: {command!r}, now: {other!r})",
    )
    assert manifest_of(cli.out)["resumes"] == []
    code, err = cli.resume("run", "--power-command", command)
    assert code == 0, err
    assert manifest_of(cli.out)["status"] == "completed"


def test_a_run_without_a_meter_refuses_one_on_resume(cli: RoundtripCli, tmp_path: Path) -> None:
    assert cli.start("run", *QUIET)[0] == 0
    plant(cli.out, None)
    code, err = cli.resume("run", "--power-command", meter(tmp_path))
    assert_one_line_error(code, err, "setting --power-command differs (run: none, now: ")


def test_a_stored_command_is_shown_escaped_never_as_terminal_control(
    cli: RoundtripCli, tmp_path: Path
) -> None:
    assert cli.start("run", *QUIET)[0] == 0
    plant(cli.out, "meter\x1b]0;owned\x07\nrm -rf ~")
    code, err = cli.resume("run", "--power-command", meter(tmp_path))
    assert_one_line_error(code, err, "\\x1b]0;owned\\x07\\nrm -rf ~")
    assert "\x1b" not in err


def test_consistency_resume_follows_the_same_rule(cli: RoundtripCli, tmp_path: Path) -> None:
    args = ("--samples", "2", "--temperatures", "0.5")
    assert cli.start("consistency", *args)[0] == 0
    marker = tmp_path / "pwned"
    plant(cli.out, f"touch {marker}")
    code, err = cli.resume("consistency")
    assert_one_line_error(code, err, "give --power-command CMD again")
    assert not marker.exists()


def test_plan_run_never_continues_a_cell_with_the_cell_folders_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    launches = Launches(monkeypatch)
    monkeypatch.setattr(execute, "launch", launches)
    plan = write_plan(tmp_path)
    out = tmp_path / "out"
    assert run_cli(capsys, "plan", "run", str(plan), "--out", str(out))[0] == 0
    cell = next((out / "runs").iterdir())
    marker = tmp_path / "pwned"
    plant(cell, f"touch {marker}")
    code, err = run_cli(capsys, "plan", "run", str(plan), "--out", str(out))
    assert code == 1
    assert f"{cell.name}: failed" in err and "--power-command" in err
    assert not marker.exists()
