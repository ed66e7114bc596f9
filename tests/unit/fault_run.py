"""A run with the fake backend in real worker processes, as a program of its own, for
tests that must stop a whole run from outside (SIGINT, SIGKILL of the parent).

    python tests/unit/fault_run.py OUT_DIR N_EXAMPLES [--delay S] [--resume]

"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from edgebench.backends.worker import BackendWorker
from edgebench.runner.run import RunInterrupted, RunSettings, execute
from tests.unit.test_runner import EchoTask, examples, model


def main(argv: list[str]) -> int:
    out, n = Path(argv[0]), int(argv[1])
    delay = float(argv[argv.index("--delay") + 1]) if "--delay" in argv else 0.0
    settings = RunSettings(out=out, warmup=False)
    options = {"echo": True, "delay_s": delay}
    try:
        execute(
            settings,
            model(),
            EchoTask(),
            examples(n),
            {"path": "mem", "sha256": "d" * 64},
            worker_factory=lambda mode: BackendWorker("fake", options),
            resume="--resume" in argv,
        )
    except RunInterrupted:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
