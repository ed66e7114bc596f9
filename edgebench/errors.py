"""Errors by kind; the CLI prints each as one line and exits with its code.

UserError   exit 2   a mistake in what the user gave (option, file, dataset line)
RunFailure  exit 1   the command could not finish: a crashed model, a write the system
                     refused (full disk or not: io.WriteFailed is one); a run's message
                     names the run folder, whose completed examples are kept
Ctrl-C      exit 130 (an interrupted run keeps its completed examples too)

Which worker or disk failure is which, and how it is said: failures.py.
"""


class UserError(Exception):
    """A mistake in the user's input (file, option, dataset line); never a bug of ours.

    The message must name what is wrong and where (file, line, field), in one line.
    """

    exit_code = 2


class RunFailure(Exception):
    """A run that could not finish for a reason that is not the user's mistake (the model
    worker crashed, a write was refused). The message names the run folder and what is
    kept."""

    exit_code = 1
