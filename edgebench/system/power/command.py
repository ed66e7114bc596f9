"""An external meter polled through `--power-command CMD`: CMD is split into words as a
shell would (`shlex.split`) and run without a shell at each poll, printing the watts (a
USB meter's or smart plug's reader, ...). The first number of its output is the reading;
a "mW" or "kW" right after it is honoured. Pipes, redirections, variables or `~` need a
shell, which the user asks for by writing one: `sh -c 'curl -s plug/status | jq .power'`.

During a run a poll that fails in any way (an exit code, no number, bytes that are not
UTF-8, a hang, a child left running) is that reading lost with its reason
(`ReadingLost`): the command's process group is killed at the timeout
(`system.bounded_command`)."""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import time

from edgebench.errors import UserError
from edgebench.system.bounded_command import run_bounded
from edgebench.system.power.sample import MAX_WATTS, PowerSample, ReadingLost, plausible_watts

_TIMEOUT_S = 5.0
_NUMBER = re.compile(r"(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[mk]?W\b)?")
_SCALE = {"mW": 1e-3, "kW": 1e3}
# outside quotes, what a shell would read as syntax rather than as a word
_OPERATORS = frozenset("|&;<>()`$\n")
METER_COVERS = (
    "whatever the meter is wired to: a wall plug meter sees the whole machine with its "
    "power supply's losses (and all else on that socket), a USB meter everything behind "
    "its port"
)


def parse_watts(text: str) -> float | None:
    """The first number of `text` in watts; None when there is none."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    return float(match["value"]) * _SCALE.get(match["unit"] or "W", 1.0)


def shell_syntax(command: str) -> str | None:
    """The first character a shell would take as syntax (an operator, `$`, a backquote,
    a word's leading `~` or `#`), outside quotes; None when there is none."""
    quote: str | None = None
    escaped, word_start = False, True
    for char in command:
        if escaped:
            escaped, word_start = False, False
        elif quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif quote == '"':
            if char in "$`":
                return char
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote, word_start = char, False
        elif char in _OPERATORS or (word_start and char in "~#"):
            return char
        else:
            word_start = char.isspace()
    return None


def command_argv(command: str) -> list[str]:
    """The words `--power-command` runs (no shell); UserError for an empty command, one
    a shell would read differently, or unbalanced quotes."""
    where = f"--power-command {command!r}"
    if not command.strip():
        raise UserError("--power-command is empty: give a command that prints watts")
    syntax = shell_syntax(command)
    if syntax is not None:
        raise UserError(
            f"{where}: {syntax!r} is shell syntax, but the command runs without a shell; "
            "to use one, write it as sh -c '...'"
        )
    try:
        return shlex.split(command)
    except ValueError as err:
        raise UserError(f"{where}: {err}") from None


class CommandSource:
    name = "command"
    tier = "external"
    resolution = "the meter's own reading, one per poll (each poll runs the command)"
    covers = METER_COVERS

    def __init__(self, command: str, timeout: float = _TIMEOUT_S) -> None:
        self.command = command
        self.argv = command_argv(command)
        self.timeout = timeout

    def run(self) -> float:
        """One reading in watts; UserError naming the command and what went wrong."""
        try:
            return self.poll()
        except ReadingLost as lost:
            raise UserError(f"--power-command {self.command!r} {lost.detail}") from None

    def poll(self) -> float:
        """One reading in watts; ReadingLost(reason, detail) when there is none: the
        reason in words that are the same at every poll, the detail with what it said."""
        try:
            done = run_bounded(self.argv, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            why = f"did not finish within {self.timeout:g} s"
            raise ReadingLost(why, why) from None
        except OSError as err:
            why = f"could not start ({err.strerror or err})"
            raise ReadingLost(why, f"could not start: {err.strerror or err}") from None
        if done.returncode < 0:  # killed: the OOM killer, a watchdog, itself
            why = f"ended by signal {-done.returncode}"
            raise ReadingLost(why, why)
        if done.returncode != 0:
            said = _last_line(done.stderr.decode("utf-8", errors="replace")) or _last_line(
                done.stdout.decode("utf-8", errors="replace")
            )
            why = f"failed (exit {done.returncode})"
            raise ReadingLost(why, f"{why}: {said or 'no message'}")
        try:
            text = done.stdout.decode("utf-8")
        except UnicodeDecodeError:
            why = "printed bytes that are not UTF-8 text"
            raise ReadingLost(why, why) from None
        watts = parse_watts(text)
        if watts is None:
            shown = _last_line(text)[:80]
            said = f"it printed {shown!r}" if shown else "it printed nothing"
            raise ReadingLost("printed no number of watts", f"printed no number of watts ({said})")
        if not plausible_watts(watts):
            if math.isfinite(watts) and watts > 0:  # no device's draw: the meter's garbage
                why = f"printed watts over {MAX_WATTS:g} W"
                raise ReadingLost(why, f"printed {watts:g} W: more than any device draws")
            why = "printed watts that are not a number >= 0"
            raise ReadingLost(why, f"printed {watts:g} W: watts must be a number >= 0")
        return watts

    def read(self) -> PowerSample:
        start = time.time()
        watts = self.poll()  # ReadingLost: the timeline records the gap and why
        # the meter's reading belongs to the moment the command ran, not when it ended
        return PowerSample(t=(start + time.time()) / 2, watts=watts, joules=None)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def check_power_command(command: str) -> CommandSource:
    """The source for `--power-command`, after one reading proves the command works."""
    source = CommandSource(command)
    source.run()
    return source
