"""What tests of a whole fake run share with the `run_fake` fixture (tests/conftest.py):
its type, and what the timeline reads of a machine with no sensors (its default)."""

from __future__ import annotations

from collections.abc import Callable

from edgebench.runner.engine import RunResult

RunFake = Callable[..., RunResult]
# what the timeline reads of a machine with no sensors
NOTHING_READABLE = {"temp_c": None, "temp_source": None, "freq_mhz": [], "throttled": None}
