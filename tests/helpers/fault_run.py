"""A run with the fake backend in real worker processes, as a program of its own, for
system tests that stop a whole run from outside (SIGINT, SIGKILL of the parent).

    python tests/helpers/fault_run.py OUT_DIR N_EXAMPLES [--delay S]

The run is `run_fake(FakeBackend(echo=True), examples=echo_examples(N), out=OUT_DIR)`
(tests/conftest.py) with each arm's worker in its own process, so the test resumes it
with that call. Exit code 130 when interrupted (Ctrl-C, SIGTERM), else 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from edgebench.backends.worker import BackendWorker
from edgebench.runfolder.records import DatasetRecord, RunSettings
from edgebench.runner.engine import RunInterrupted, execute
from edgebench.runner.request import RunEnvironment, RunRequest
from tests.helpers.fakes import EchoTask, fake_model
from tests.helpers.faults import echo_examples


def main(argv: list[str]) -> int:
    out, n = Path(argv[0]), int(argv[1])
    delay = float(argv[argv.index("--delay") + 1]) if "--delay" in argv else 0.0
    options = {"echo": True, "delay_s": delay}
    try:
        request = RunRequest(
            RunSettings(out=out, warmup=False),
            [fake_model()],
            EchoTask(),
            echo_examples(n),
            DatasetRecord(path="mem"),
        )
        execute(
            request,
            RunEnvironment(worker_factory=lambda model, mode: BackendWorker("fake", options)),
        )
    except RunInterrupted:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
