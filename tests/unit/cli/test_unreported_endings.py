"""What no command turned into its own line still ends in one: a Ctrl-C anywhere in a
command (click's Abort) is `interrupted` and 130, a full disk (or one that refuses
writes: read-only, failing) is one line and 1; any other OSError is a bug and keeps its
traceback."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from edgebench.cli import compare_cmd
from tests.helpers.cli import assert_one_line_error, run_cli


def raising(exc: BaseException):
    def command(*args: object, **kwargs: object) -> None:
        raise exc

    return command


def test_ctrl_c_inside_any_command_is_one_line_and_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(compare_cmd, "run_sources", raising(KeyboardInterrupt()))
    code, err = run_cli(capsys, "compare", str(tmp_path))
    assert code == 130, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        "interrupted: the command was stopped"
    ]


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_no_command_reported_is_one_line_and_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, number: int
) -> None:
    from edgebench.cli import app

    full = OSError(number, "No space left on device", "/data/out/x.json")
    monkeypatch.setattr(app, "build", raising(full))
    code, err = run_cli(capsys, "compare", "x")
    assert_one_line_error(
        code,
        err,
        "error: /data/out/x.json: cannot write (No space left on device); free space, then "
        "run the command again",
        exit_code=1,
    )


@pytest.mark.parametrize(
    ("number", "reason"),
    [(errno.EROFS, "Read-only file system"), (errno.EIO, "Input/output error")],
)
def test_a_disk_that_refuses_writes_no_command_reported_is_one_line_and_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, number: int, reason: str
) -> None:
    """An SD card remounted read-only, a failing disk: the disk's fault, not a bug
    (before: a traceback)."""
    from edgebench.cli import app

    monkeypatch.setattr(app, "build", raising(OSError(number, reason, "/data/out/x.json")))
    code, err = run_cli(capsys, "compare", "x")
    assert_one_line_error(
        code,
        err,
        f"error: /data/out/x.json: cannot write ({reason}); fix it, then run the command again",
        exit_code=1,
    )


def test_any_other_os_error_is_a_bug_with_its_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from edgebench.cli import app

    monkeypatch.setattr(app, "build", raising(OSError(errno.EBADF, "Bad file descriptor")))
    with pytest.raises(OSError):
        run_cli(capsys, "compare", "x")


def test_ctrl_c_before_click_runs_is_one_line_and_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from edgebench.cli import app

    monkeypatch.setattr(app, "build", raising(KeyboardInterrupt()))
    code, err = run_cli(capsys, "compare", "x")
    assert code == 130 and "Traceback" not in err
    assert err.strip() == "interrupted: the command was stopped"
