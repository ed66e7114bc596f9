"""`edgebench run` and `edgebench consistency` in this process on the fake model: no
model file, no worker process."""

from __future__ import annotations

import pytest

from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import Worker, WorkerFactory
from tests.helpers.fakes import fake_model


def use_fake_model(monkeypatch: pytest.MonkeyPatch, make_worker: WorkerFactory) -> None:
    """Every `--model` name (or none) resolves to `fake_model(<the name>)`, and every
    worker the run starts is `make_worker(model, mode)` (e.g. an `InProcessWorker`)."""
    from edgebench.cli import output
    from edgebench.runner import engine

    def resolve(spec: str | None) -> ModelUnderTest:
        return fake_model(spec or "fake-model")

    def start_worker(model: ModelUnderTest, mode: str, *, threads: int, guard: bool) -> Worker:
        return make_worker(model, mode)

    monkeypatch.setattr(output, "model_under_test", resolve)
    monkeypatch.setattr(engine, "start_worker", start_worker)


def assert_run_ends_with_error(code: int, err: str, *fragments: str, exit_code: int) -> str:
    """A run that started (its progress and notes are on stderr too) ended with exit
    `exit_code`, no traceback, and a last line `error: ...` naming every fragment;
    returns that line."""
    assert code == exit_code, err
    assert "Traceback" not in err
    last = [line for line in err.strip().splitlines() if line.strip()][-1]
    assert last.startswith("error: "), err
    for fragment in fragments:
        assert fragment in last, last
    return last
