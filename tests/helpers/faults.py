"""Trouble on demand for runner tests: examples a fault marker makes the fake misbehave on,
examples whose echo is a distinct JSON answer, an in-process worker that "dies" like a
real one, progress hooks that press Ctrl-C or kill the worker after N samples, and a
scorer that fails on one answer."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from collections.abc import Callable
from typing import Any

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.isolation import WorkerDied
from edgebench.metrics.base import Evaluation
from edgebench.metrics.edgejson import EdgeJSONFamily
from edgebench.runfolder.records import SampleRecord
from edgebench.scoring.parse import ParseResult
from edgebench.tasks.base import Example
from tests.helpers.fakes import example, examples


def with_marker(exs: list[Example], at: int, marker: str) -> list[Example]:
    """`exs` with `marker` put in front of example `at`'s text (a FakeBackend fault)."""
    marked = exs[at]
    return [*exs[:at], dataclasses.replace(marked, text=f"{marker} {marked.text}"), *exs[at + 1 :]]


def marked_examples(n: int, marker: str, *at: int) -> list[Example]:
    """`n` echo examples, those at positions `at` carrying `marker`."""
    exs = examples(n)
    for index in at:
        exs = with_marker(exs, index, marker)
    return exs


def echo_examples(n: int) -> list[Example]:
    """Examples whose text is a distinct JSON object, so a FakeBackend with `echo` gives
    each its own answer: right (`{"a": i}` expected) unless i is a multiple of 3."""
    return [
        example(i, text=json.dumps({"a": i}), expected={"a": i if i % 3 else -1}) for i in range(n)
    ]


class DyingWorker(InProcessWorker):
    """An in-process worker that fails as a dead worker process does (`WorkerDied`, exit
    code -9) on a prompt containing `marker` (None: on every prompt). Its memory is
    this process's; there is no process to kill."""

    def __init__(self, backend: FakeBackend, marker: str | None = None) -> None:
        super().__init__(backend)
        self.marker = marker

    def generate(
        self, prompt: str, settings: DecodeSettings, timeout: float | None = None
    ) -> Generation:
        if self.marker is None or self.marker in prompt:
            raise WorkerDied(-signal.SIGKILL, "generate")
        return super().generate(prompt, settings, timeout)


class Hook:
    """A progress display that calls `action` once, after the `n`-th sample."""

    def __init__(self, n: int, action: Callable[[], Any]) -> None:
        self.n, self.seen, self.action = n, 0, action
        self.samples: list[SampleRecord] = []

    def start(self, total: int, description: str, run_left: int) -> None: ...
    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...

    def advance(self, sample: SampleRecord) -> None:
        self.seen += 1
        self.samples.append(sample)
        if self.seen == self.n:
            self.action()


def interrupt_after(n: int) -> Hook:
    """Ctrl-C (a KeyboardInterrupt in the progress display) after `n` samples."""

    def press() -> None:
        raise KeyboardInterrupt

    return Hook(n, press)


def kill_worker_after(n: int, pids: list[int]) -> Hook:
    """SIGKILL of the newest worker process in `pids` after `n` samples."""
    return Hook(n, lambda: os.kill(pids[-1], signal.SIGKILL))


def break_edgejson_scoring(monkeypatch: Any, answer: Any, error: Exception) -> None:
    """The EdgeJSON family raises `error` on an output that parses to `answer` (a scorer
    bug some hostile output hits) and scores every other output as usual."""
    evaluate = EdgeJSONFamily.evaluate

    def broken(self: EdgeJSONFamily, output: ParseResult, expected: Any, schema: Any) -> Evaluation:
        if output.value == answer:
            raise error
        return evaluate(self, output, expected, schema)

    monkeypatch.setattr(EdgeJSONFamily, "evaluate", broken)
