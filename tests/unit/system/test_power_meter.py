"""An external meter: `--power-command` with fake scripts and `--power-log` CSV files;
every bad input is a one-line UserError naming the option or file:line."""

from __future__ import annotations

import shlex
import stat
from datetime import datetime
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.system.power import (
    PowerChoice,
    choose_power_source,
    describe_power_log,
    read_power_log,
)
from edgebench.system.power.command import CommandSource, parse_watts
from edgebench.system.power.sample import ReadingLost


def script(tmp_path: Path, body: str, name: str = "meter.sh") -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def user_error(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(UserError) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# -- --power-command ------------------------------------------------------------------
def test_power_command_is_polled(tmp_path: Path) -> None:
    # the meter's reading changes between polls: the script counts its calls
    counter = tmp_path / "calls"
    counter.write_text("0")
    cmd = script(tmp_path, f'n=$(($(cat {counter}) + 1)); echo $n > {counter}; echo "$n.5 W"')
    choice = choose_power_source(command=cmd)
    assert choice.source is not None and choice.log is None and choice.reason is None
    assert (choice.source.name, choice.source.tier) == ("command", "external")
    readings = [choice.source.read() for _ in range(2)]
    assert [s.watts for s in readings if s] == [2.5, 3.5]  # call 1 was the check
    assert all(s and s.joules is None for s in readings)
    assert readings[0].t < readings[1].t  # type: ignore[union-attr]


def test_power_command_runs_without_a_shell_unless_the_user_writes_one(tmp_path: Path) -> None:
    (tmp_path / "plug.json").write_text('{"power": 7.25, "voltage": 230}')
    piped = f"cat {tmp_path / 'plug.json'} | sed 's/.*power\": //'"
    assert user_error(choose_power_source, command=piped) == (
        f"--power-command {piped!r}: '|' is shell syntax, but the command runs without a "
        "shell; to use one, write it as sh -c '...'"
    )
    source = choose_power_source(command=f"sh -c {shlex.quote(piped)}").source
    assert source is not None and source.read().watts == 7.25  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("command", "syntax"),
    [
        ("meter > out.txt", ">"),
        ("meter; touch x", ";"),
        ("meter && touch x", "&"),
        ("meter $(touch x)", "$"),
        ("meter `touch x`", "`"),
        ('meter "$HOME"', "$"),
        ("~/meter", "~"),
        ("meter\ntouch x", "\n"),
        ("meter # comment", "#"),
    ],
)
def test_shell_syntax_is_refused_with_what_to_write(command: str, syntax: str) -> None:
    message = user_error(CommandSource, command)
    assert f": {syntax!r} is shell syntax" in message and "sh -c" in message


@pytest.mark.parametrize(
    "command", ["meter '|' 'a;b' '$x'", 'meter "a|b"', "meter a\\|b", "meter --x=~/f"]
)
def test_quoted_characters_are_words(command: str) -> None:
    assert CommandSource(command).argv == shlex.split(command)


def test_unbalanced_quotes_are_one_line() -> None:
    assert user_error(CommandSource, "meter 'x") == (
        '--power-command "meter \'x": No closing quotation'
    )


@pytest.mark.parametrize(
    ("text", "watts"),
    [("5", 5.0), ("4.2W\n", 4.2), ("power: 850 mW", 0.85), ("1.2 kW", 1200.0), (".5", 0.5)],
)
def test_parse_watts(text: str, watts: float) -> None:
    assert parse_watts(text) == pytest.approx(watts)


def test_power_command_that_fails(tmp_path: Path) -> None:
    cmd = script(tmp_path, "echo 'meter not found on /dev/ttyUSB0' >&2; exit 3")
    assert user_error(choose_power_source, command=cmd) == (
        f"--power-command {cmd!r} failed (exit 3): meter not found on /dev/ttyUSB0"
    )


def test_power_command_not_found(tmp_path: Path) -> None:
    message = user_error(choose_power_source, command="no-such-meter-tool --watts")
    assert message == (
        "--power-command 'no-such-meter-tool --watts' could not start: No such file or directory"
    )


def test_power_command_without_a_number(tmp_path: Path) -> None:
    cmd = script(tmp_path, "echo 'connecting...'; echo 'no reading yet'")
    assert user_error(choose_power_source, command=cmd) == (
        f"--power-command {cmd!r} printed no number of watts (it printed 'no reading yet')"
    )
    silent = script(tmp_path, "true", name="silent.sh")
    assert user_error(choose_power_source, command=silent).endswith("(it printed nothing)")


def test_power_command_negative_watts(tmp_path: Path) -> None:
    cmd = script(tmp_path, "echo -3.5")
    assert user_error(choose_power_source, command=cmd) == (
        f"--power-command {cmd!r} printed -3.5 W: watts must be a number >= 0"
    )


def test_power_command_that_hangs(tmp_path: Path) -> None:
    cmd = script(tmp_path, "sleep 5; echo 3")
    source = CommandSource(cmd, timeout=0.3)
    assert user_error(source.run) == f"--power-command {cmd!r} did not finish within 0.3 s"
    with pytest.raises(ReadingLost, match=r"^did not finish within 0.3 s$"):
        source.read()  # during a run: a gap with its reason, not an error


def test_power_command_empty() -> None:
    assert user_error(choose_power_source, command="  ") == (
        "--power-command is empty: give a command that prints watts"
    )


def test_power_log_and_command_together(tmp_path: Path) -> None:
    assert user_error(choose_power_source, command="echo 1", log=tmp_path / "p.csv") == (
        "--power-log and --power-command both given: one meter, one option"
    )


def test_power_log_is_read_after_the_run(tmp_path: Path) -> None:
    # the meter writes the file during the run: it need not exist yet
    log = tmp_path / "meter.csv"
    assert choose_power_source(log=log) == PowerChoice(source=None, log=log, reason=None)


# -- --power-log ----------------------------------------------------------------------
def csv_file(tmp_path: Path, text: str, name: str = "meter.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_power_log_unix_seconds_with_header(tmp_path: Path) -> None:
    # a spreadsheet's byte-order mark before the header is no part of it
    path = csv_file(
        tmp_path, "\ufefftime,watts\n1764129600,4.5\n1764129600.5, 5.25 \n\n1764129601,6\n"
    )
    samples = read_power_log(path)
    assert [(s.t, s.watts, s.joules) for s in samples] == [
        (1764129600.0, 4.5, None),
        (1764129600.5, 5.25, None),
        (1764129601.0, 6.0, None),
    ]
    info = describe_power_log(samples)
    assert (info.name, info.tier) == ("log", "external")
    assert (
        info.resolution == "the meter's own readings from its log, a reading every 0.5 s (median)"
    )


def test_power_log_iso_timestamps_without_header(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "2026-11-26T04:00:00Z,3.0\n2026-11-26T05:00:01+01:00,3.5\n2026-11-26 04:00:02.250,4\n",
    )
    samples = read_power_log(path)
    assert samples[0].t == 1795665600.0
    assert samples[1].t == 1795665601.0  # +01:00: the same instant one second later
    # no zone: this machine's local time
    assert samples[2].t == datetime(2026, 11, 26, 4, 0, 2, 250000).timestamp()
    assert [s.watts for s in samples] == [3.0, 3.5, 4.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("time,watts\n1764129600,4.5,5.1\n", "{f}:2: expected 2 columns time,watts, got 3"),
        ("1764129600\n", "{f}:1: expected 2 columns time,watts, got 1"),
        (
            "time,watts\nyesterday,4\n",
            "{f}:2: time 'yesterday' is neither unix seconds nor ISO 8601",
        ),
        ("1764129600,4\nnan,4\n", "{f}:2: time 'nan' is neither unix seconds nor ISO 8601"),
        ("1764129600,4\n1764129601,4.5W\n", "{f}:2: watts '4.5W' is not a number"),
        ("1764129600,inf\n", "{f}:1: watts 'inf' is not a number"),
        ("1764129600,4\n1764129601,\n", "{f}:2: watts '' is not a number"),
        ("t,w\n1764129600,4\n1764129601,-0.2\n", "{f}:3: watts -0.2 is negative"),
        (
            "1764129600,4\n1764129602,4\n1764129601,4\n",
            "{f}:3: time 1764129601 is not after the row before it: rows must go forward in time",
        ),
        (
            "1764129600,4\n1764129600,4\n",
            "{f}:2: time 1764129600 is not after the row before it: rows must go forward in time",
        ),
        ("1764129600000,4\n", "{f}:1: time 1764129600000 is not unix seconds (milliseconds?)"),
        ("time,watts\n", "--power-log {f}: no time,watts rows"),
        ("", "--power-log {f}: no time,watts rows"),
    ],
)
def test_power_log_bad_rows(tmp_path: Path, text: str, message: str) -> None:
    path = csv_file(tmp_path, text)
    assert user_error(read_power_log, path) == message.format(f=path)


def test_power_log_missing_or_not_text(tmp_path: Path) -> None:
    missing = tmp_path / "none.csv"
    assert user_error(read_power_log, missing) == (
        f"--power-log {missing}: cannot read it (No such file or directory)"
    )
    binary = tmp_path / "meter.bin"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    assert user_error(read_power_log, binary) == f"{binary}:1: not UTF-8 text"
