"""`python -m edgebench` and the `edgebench` command.

Loading the command line (typer, every command's options) takes a moment; a Ctrl-C then
would be a KeyboardInterrupt traceback from whichever import it lands in. Until the
command starts, Ctrl-C ends it at once with one line and exit code 130: nothing has been
done yet (`guard_loading`, in the package's __init__: under `python -m` it is in place
before this file is even found). Python's own start-up before that is Python's. A lone
`--version` is answered without loading the command line at all.
"""

import _signal
import sys

from edgebench import guard_loading


def entry() -> None:
    """Load the command line with Ctrl-C guarded, then run it (cli/app.py's `main`
    handles Ctrl-C from there on). A SIGINT ignored by the caller stays ignored."""
    guarded = guard_loading()
    if sys.argv[1:] == ["--version"] and _version_printed():
        if guarded:  # printed: a Ctrl-C now could only cut Python's exit short
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        return
    from edgebench.cli.app import interrupted_line, main

    try:
        if guarded:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        main()
    except KeyboardInterrupt:  # in the instant between the two handlers
        interrupted_line()
        sys.exit(130)
    finally:
        # The command has ended and said so: a Ctrl-C now could only cut Python's own
        # exit short (killed by SIGINT, its exit code lost).
        if guarded:
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)


def _version_printed() -> bool:
    """`edgebench --version` as the command line prints it, without loading typer and
    the commands; False when stdout could not take it (a full disk): the command line
    then prints it again and reports that as any command does."""
    from edgebench.cli.version import version_line

    try:
        print(version_line(), flush=True)
    except OSError:
        return False
    return True


if __name__ == "__main__":
    entry()
