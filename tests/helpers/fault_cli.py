"""The `edgebench` command on the fake model, as a program of its own, for system tests
that send the whole command a signal (SIGHUP, SIGTERM) as a shell or service manager would.

    python tests/helpers/fault_cli.py DELAY_S ARGS...

Runs `edgebench ARGS` with every `--model` resolved to `fake_model(<name>)` and every
worker an in-process FakeBackend echoing the prompt's first JSON object, `DELAY_S` seconds
of real time per answer, on a quiet fake machine (tests/helpers/cli_model.py and the
unit tests' fixtures do the same inside pytest). Under
`edgebench plan run` each cell's process is this script again, with the same delay.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.app import main
from edgebench.plan import execute
from edgebench.runner import engine, start
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import Worker
from tests.helpers.cpu_times import CLEAN, always
from tests.helpers.fakes import fake_model


def run(argv: list[str]) -> None:
    delay = float(argv[0])

    def resolve(spec: str | None) -> ModelUnderTest:
        return fake_model(spec or "fake-model")

    def start_worker(model: ModelUnderTest, mode: str, *, threads: int, guard: bool) -> Worker:
        return InProcessWorker(FakeBackend(echo=True, delay_s=delay))

    start.model_under_test = resolve  # type: ignore[assignment]
    engine.start_worker = start_worker  # type: ignore[assignment]
    engine.CPU_TIMES = always(CLEAN)  # a quiet machine: the answers' count is the test's
    execute.EDGEBENCH[:] = [sys.executable, str(Path(__file__).resolve()), argv[0]]
    main(argv[1:])


if __name__ == "__main__":
    run(sys.argv[1:])
