"""`edgebench doctor` asks the llama.cpp build in a throwaway process: a build that is
not installed, or that dies with SIGILL on this CPU, is a line in the report, not a crash."""

from __future__ import annotations

import os
import signal
from typing import Any

from edgebench.doctor import diagnose as doctor
from edgebench.errors import UserError


def _not_installed() -> dict[str, Any]:
    raise UserError("llama-cpp-python is not installed: run ./install.sh")


def _illegal_instruction() -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGILL)
    return {}


def test_the_build_is_asked_in_a_throwaway_process() -> None:
    assert doctor.llama_build(_not_installed) == (
        None,
        "llama-cpp-python is not installed: run ./install.sh",
    )
    runtime, error = doctor.llama_build(_illegal_instruction)
    assert runtime is None and error is not None
    assert error.startswith("loading llama.cpp was killed by SIGILL")
