"""Plans for tests: a plan file beside a small roundtrip dataset, and launchers that stand
in for a cell's process (in this process, on the fake model; or scripted outcomes)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.app import main
from tests.helpers.cli_model import use_fake_model

MODEL = "smollm2-135m-instruct"  # a registry name: a plan checks its models' names
PLAN = f"""\
models = ["{MODEL}"]
constraints = ["none", "json"]
threads = [1]

[[tasks]]
task = "roundtrip"
dataset = "data/payloads.jsonl"
limit = 2
"""


def write_plan(folder: Path, text: str = PLAN, n_payloads: int = 3) -> Path:
    """`folder/plan.toml` with `text`, and `folder/data/payloads.jsonl` (n objects)."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    payloads = "".join(json.dumps({f"k{i}": i}) + "\n" for i in range(n_payloads))
    (folder / "data" / "payloads.jsonl").write_text(payloads)
    plan = folder / "plan.toml"
    plan.write_text(text)
    return plan


# A scripted outcome for one call: None runs it for real (in this process); an int is
# the exit code of a process that did nothing; an exception is raised (KeyboardInterrupt).
Outcome = int | BaseException | None


@dataclass
class Launches:
    """The launcher `PlanRun` gets: every call recorded (args, the device name the
    environment carried); `edgebench ARGS` run in this process on the fake model unless
    `script` says otherwise for a call whose joined args contain a given text
    (`--constraint json`)."""

    monkeypatch: pytest.MonkeyPatch
    calls: list[list[str]] = field(default_factory=list)
    device_names: list[str | None] = field(default_factory=list)
    script: dict[str, Outcome] = field(default_factory=dict)

    def __post_init__(self) -> None:
        backend = FakeBackend(echo=True)
        use_fake_model(self.monkeypatch, lambda model, mode: InProcessWorker(backend))

    def __call__(self, args: list[str], env: dict[str, str], log: Path) -> int:
        self.calls.append(list(args))
        self.device_names.append(env.get("EDGEBENCH_DEVICE_NAME"))
        for text, outcome in self.script.items():
            if text in " ".join(args):
                if isinstance(outcome, BaseException):
                    raise outcome
                if outcome is not None:
                    log.write_text(f"error: scripted failure of {text}\n")
                    return outcome
        try:
            main(list(args))
        except SystemExit as done:
            code = int(done.code or 0)
        else:
            code = 0
        return code

    def commands(self) -> list[str]:
        """Each call's first words: `run --model`, `run --resume`, `models quantize` ..."""
        return [" ".join(call[:2]) for call in self.calls]
