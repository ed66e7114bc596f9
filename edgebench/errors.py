"""Errors a user can cause. The CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """A mistake in the user's input (file, option, dataset line); never a bug of ours.

    The message must name what is wrong and where (file, line, field), in one line.
    """

    exit_code = 2
