"""A `--power-command` whose first reading fails (it exits non-zero, prints no number or
bytes that are not UTF-8, cannot start) is the user's mistake, said in one line before
anything is made: before, the run folder was made first and left behind with its
manifest `running` (a folder `--resume` could never finish while the meter fails)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from tests.helpers.cli import assert_one_line_error
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    made = roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}, {"b": [2]}])
    made.answer_with(FakeBackend(echo=True))
    return made


@pytest.mark.parametrize(
    ("meter", "said"),
    [
        ("false", "failed (exit 1): no message"),
        ("echo garbage", "printed no number of watts (it printed 'garbage')"),
        ("/nonexistent/meter", "could not start: No such file or directory"),
        ("printf '\\377'", "printed bytes that are not UTF-8 text"),
        ("echo -- -4", "watts must be a number >= 0"),
    ],
)
def test_a_meter_that_fails_its_first_reading_is_one_line_and_leaves_nothing(
    cli: RoundtripCli, meter: str, said: str
) -> None:
    code, err = cli.start("run", "--power-command", meter, "--idle-baseline", "0")
    assert_one_line_error(code, err, f"--power-command {meter!r}", said)
    assert not cli.out.exists()


def test_a_resume_whose_meter_now_fails_leaves_the_folder_unchanged(
    cli: RoundtripCli, tmp_path: Path
) -> None:
    script = tmp_path / "meter.sh"
    script.write_text("#!/bin/sh\necho 4.5 W\n")
    script.chmod(0o755)
    assert cli.start("run", "--power-command", str(script), "--idle-baseline", "0")[0] == 0
    manifest = cli.out / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"completed"', '"interrupted"', 1))
    before = {p.name: p.read_bytes() for p in cli.out.iterdir()}
    script.write_text("#!/bin/sh\necho 'meter unplugged' >&2; exit 3\n")
    code, err = cli.resume("run", "--power-command", str(script))
    assert_one_line_error(code, err, "failed (exit 3): meter unplugged")
    assert {p.name: p.read_bytes() for p in cli.out.iterdir()} == before
