"""The click command tree behind the Typer app, settled once before it runs: every
placeholder is one a user can act on, and a usage mistake becomes the house one-line error.

Typer prints a parameter's Python type when no metavar is given (`<list[Path]>`, and
`<bool>` after every flag, `--help` included); a flag takes no value, so it shows none,
and any other parameter without an explicit metavar shows its name in capitals. A
required argument is `RUN_DIR...` in the usage line (Typer writes `{RUN_DIR}...`).

Help texts are text, not Rich markup: `pip install 'edgebench[parquet]'` keeps its
brackets; and a help text that states its default is not followed by Typer's own
`[default: ...]` saying it again.
"""

from __future__ import annotations

import contextlib
import functools
import re
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import typer
from rich.markup import escape
from typer._click import Command, Context
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperArgument, TyperGroup
from typer.exceptions import Abort


def build(app: typer.Typer, order: tuple[str, ...] = ()) -> Command:
    """The app's click command with every metavar settled and its commands listed in
    `order` first (Typer lists groups after commands whatever the registration order);
    the tree is built anew per call, so this is the one place the CLI gets it from."""
    root = typer.main.get_command(app)
    if isinstance(root, TyperGroup):
        first = {name: root.commands[name] for name in order}
        root.commands = {**first, **root.commands}
    for command in walk(root):
        if command.callback is not None:
            command.callback = _interrupt_reported(command.callback)
        if command.short_help is None and command.help:
            command.short_help = one_paragraph(command.help)
        settle_command_help(command)
        for param in params(command):
            settle_metavar(param)
            settle_help(param)
    return root


class Interrupted(BaseException):
    """Ctrl-C that no command turned into its own line: app.main says `interrupted`.
    Typer turns a KeyboardInterrupt into a silent exit 130; this is a BaseException as
    KeyboardInterrupt is (no `except Exception` takes it) but not one, so it comes through."""


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted


@contextlib.contextmanager
def interrupts_reported() -> Iterator[None]:
    """While the block runs (the tree built, the options parsed, a command between its
    callbacks), Ctrl-C raises Interrupted; inside a command's callback it is Python's
    KeyboardInterrupt again, as every command expects. Left alone when SIGINT is not
    Python's own handler (ignored, or a caller's) or this is not the main thread."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupt_reported(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        outside = signal.getsignal(signal.SIGINT) is _raise_interrupted
        if outside:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            return callback(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted from None
        finally:
            if outside:
                signal.signal(signal.SIGINT, _raise_interrupted)

    return run


def one_paragraph(help_text: str) -> str:
    """A command's first paragraph on one line: a command list wraps it to the terminal
    (the docstring's own line breaks would show in the list)."""
    return " ".join(help_text.strip().split("\n\n")[0].split())


def walk(command: Command) -> Iterator[Command]:
    """`command` and every command under it, depth first, in registration order."""
    yield command
    if isinstance(command, TyperGroup):
        for child in command.commands.values():
            yield from walk(child)


def params(command: Command) -> list[Any]:
    """A command's parameters with its `--help` (created lazily, then cached)."""
    help_option = command.get_help_option(Context(command))
    return [*command.params, *([help_option] if help_option is not None else [])]


def settle_metavar(param: Any) -> None:
    if getattr(param, "is_flag", False):
        param.metavar = ""  # a flag takes no value: no placeholder
    elif param.metavar is None:
        param.metavar = (param.name or "value").upper()
    if isinstance(param, TyperArgument):
        # An argument's row already shows its metavar as its name; Typer would add the
        # Python type beside it whatever the metavar.
        param.display_type_rich = _no_type
        param._usage_display_name = _usage_name(param)


def _no_type(ctx: Context) -> None:
    return None


def _usage_name(param: TyperArgument) -> Callable[[], str]:
    """An argument in the usage line as click writes it: `RUN_DIR...` when required,
    `[RUN_DIR]...` when not."""

    def name() -> str:
        shown = param.display_name_raw if param.required else f"[{param.display_name_raw}]"
        return shown + ("..." if param.nargs != 1 else "")

    return name


def settle_command_help(command: Command) -> None:
    """A command's texts shown as written (Typer reads them as Rich markup)."""
    for attribute in ("help", "short_help", "epilog"):
        text = getattr(command, attribute, None)
        if text:
            setattr(command, attribute, escape(text))


# A help text that says its default: "(default: physical cores)", "Default: smollm2 ...".
_STATES_DEFAULT = re.compile(r"\bdefault:", re.IGNORECASE)


def settle_help(param: Any) -> None:
    """A parameter's help shown as written, and its default said once."""
    text = getattr(param, "help", None)
    if not text:
        return
    if _STATES_DEFAULT.search(text):
        param.show_default = False  # the help says it, in words a user reads
    param.help = escape(text)


def usage_error_line(exc: ClickException) -> str:
    """Click's usage error as one line naming the command and where help is."""
    ctx = getattr(exc, "ctx", None)
    message = " ".join(exc.format_message().split())
    # A mistake found while parsing (a missing value) has no command context yet.
    path = ctx.command_path if ctx is not None else "edgebench"
    return f"{path}: {message} (see {path} --help)"


__all__ = [
    "Abort",
    "ClickException",
    "Interrupted",
    "NoArgsIsHelpError",
    "build",
    "interrupts_reported",
    "params",
    "usage_error_line",
    "walk",
]
