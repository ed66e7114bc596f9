"""The quantizer's child process: one killed midway (as the OOM killer would) is a
one-line error and leaves no partial file in the cache; a refusal in the child comes
back as the user's one-line error."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from edgebench.errors import RunFailure, UserError
from edgebench.models.quantize import quantize, run_quantizer
from edgebench.models.quantized import quantized_root
from tests.helpers.gguf_factory import setup_tiny_model
from tests.helpers.quantize_fakes import dies_midway, refuses


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return setup_tiny_model(monkeypatch, tmp_path)


def left_in_cache() -> list[Path]:
    root = quantized_root()
    return list(root.rglob("*")) if root.exists() else []


def test_a_quantizer_killed_midway_is_one_line_and_leaves_nothing() -> None:
    killed = functools.partial(run_quantizer, child=dies_midway)
    with pytest.raises(RunFailure) as info:
        quantize("tiny", "Q8_0", say=lambda _: None, quantizer=killed)
    assert str(info.value) == (
        "quantizing to Q8_0 failed: the quantizer process was killed by SIGKILL (Killed) "
        "(out of memory?); nothing was kept"
    )
    assert left_in_cache() == []


def test_a_refusal_in_the_child_comes_back_as_one_line() -> None:
    refused = functools.partial(run_quantizer, child=refuses)
    with pytest.raises(UserError, match=r"^llama.cpp could not quantize tiny.gguf: bad magic$"):
        quantize("tiny", "Q8_0", say=lambda _: None, quantizer=refused)
    assert left_in_cache() == []
