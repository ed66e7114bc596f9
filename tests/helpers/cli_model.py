"""`edgebench run` and `edgebench consistency` in this process on the fake model: no
model file, no worker process."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import Worker, WorkerFactory
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.fakes import fake_model
from tests.helpers.run_folder import manifest_of


def use_fake_model(monkeypatch: pytest.MonkeyPatch, make_worker: WorkerFactory) -> None:
    """Every `--model` name (or none) resolves to `fake_model(<the name>)`, and every
    worker the run starts is `make_worker(model, mode)` (e.g. an `InProcessWorker`)."""
    from edgebench.runner import engine, start

    def resolve(spec: str | None) -> ModelUnderTest:
        return fake_model(spec or "fake-model")

    def start_worker(model: ModelUnderTest, mode: str, *, threads: int, guard: bool) -> Worker:
        return make_worker(model, mode)

    monkeypatch.setattr(start, "model_under_test", resolve)
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


@dataclass
class RoundtripCli:
    """`edgebench run` or `consistency` in this process, on the fake model, of the roundtrip
    task on the file `payloads`, into the run folder `out`."""

    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch
    payloads: Path
    out: Path

    def workers(self, make_worker: WorkerFactory) -> None:
        """Every worker is `make_worker(model, mode)` (see `use_fake_model`)."""
        use_fake_model(self.monkeypatch, make_worker)

    def answer_with(self, backend: FakeBackend) -> None:
        """Every worker is an in-process one on `backend`."""
        self.workers(lambda model, mode: InProcessWorker(backend))

    def start(self, command: str, *args: str) -> tuple[int, str]:
        """`edgebench COMMAND --task roundtrip --dataset PAYLOADS --out OUT ARGS`: the exit
        code and what went to stderr."""
        task = ("--task", "roundtrip", "--dataset", str(self.payloads), "--out", str(self.out))
        return run_cli(self.capsys, command, *task, *args)

    def resume(self, command: str, *args: str) -> tuple[int, str]:
        """`edgebench COMMAND --resume OUT ARGS`."""
        return run_cli(self.capsys, command, "--resume", str(self.out), *args)


def roundtrip_cli(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    payloads: list[Any],
) -> RoundtripCli:
    """A `RoundtripCli` on `payloads` (JSON values) written one a line to
    tmp_path/payloads.jsonl, into tmp_path/run."""
    path = tmp_path / "payloads.jsonl"
    path.write_text("".join(json.dumps(payload) + "\n" for payload in payloads))
    return RoundtripCli(capsys, monkeypatch, path, tmp_path / "run")


def assert_resume_names_the_command(cli: RoundtripCli, made_by: str, *args: str) -> None:
    """A folder made by `edgebench MADE_BY` (with `args`), resumed with the other command:
    a one-line user error naming the command that made it and how to continue, and the
    folder untouched (its samples, no resume recorded)."""
    other = {"run": "consistency", "consistency": "run"}[made_by]
    code, err = cli.start(made_by, *args)
    assert code == 0, err
    before = (cli.out / "samples.jsonl").read_bytes()
    code, err = cli.resume(other)
    assert_one_line_error(
        code,
        err,
        f"cannot resume {cli.out}: it was made by `edgebench {made_by}`",
        f"continue it with `edgebench {made_by} --resume {cli.out}`",
    )
    assert (cli.out / "samples.jsonl").read_bytes() == before
    assert manifest_of(cli.out)["resumes"] == []
