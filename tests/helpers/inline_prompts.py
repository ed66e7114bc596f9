"""Chat prompts rendered in this process, for unit tests that need a run of a chat model
(`report_runs.make_run`) but test something else: a run renders its chat prompts in a
throwaway child process (`edgebench.prompts.render_isolated`), which unit tests do not
start. The same sandboxed renderer runs (`edgebench.prompts.render_all`), only without the
child; the isolation itself is tested under tests/system."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from edgebench import prompts


def _render_here(*args: Any, timeout: float = 0, memory_bytes: int = 0, **tokens: Any) -> list[str]:
    """`render_isolated` without its child process, so without its limits."""
    return prompts.render_all(*args, **tokens)


@contextmanager
def chat_templates_in_process() -> Iterator[None]:
    """Within the block, runs render chat prompts in this process (no child process)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prompts, "render_isolated", _render_here)
        yield
