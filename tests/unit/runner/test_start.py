"""`runner.start.start_run`: the start-a-run sequence as a library call, no command line,
with the fake backend; it gives the summary `edgebench run` gives."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.errors import UserError
from edgebench.runfolder.read import read_manifest
from edgebench.runner.jobs import ConsistencyRun
from edgebench.runner.request import RunEnvironment
from edgebench.runner.start import start_run
from edgebench.tasks import get_task
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli, use_fake_model
from tests.helpers.fakes import fake_model

PAYLOADS = [{"a": 1}, {"b": [2, 3]}, {"c": "x"}]


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    made = roundtrip_cli(capsys, monkeypatch, tmp_path, PAYLOADS)
    made.answer_with(FakeBackend(echo=True))
    return made


def _echo(model: Any, mode: str) -> InProcessWorker:
    return InProcessWorker(FakeBackend(echo=True))


# What differs between two runs of the same request: where they ran, and the machine's
# own timings and memory (the fake's answers, scores and counts are the same every time).
_VOLATILE = {"run_id", "perf", "compile", "energy"}


def _stable(value: Any) -> Any:
    """A summary's JSON without the run's name and the machine's timings."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def test_a_library_run_gives_the_summary_the_cli_run_gives(cli: RoundtripCli) -> None:
    code, err = cli.start("run", "--constraint", "none,json")
    assert code == 0, err
    settings = replace(read_manifest(cli.out).settings, out=cli.out.parent / "library")
    warnings: list[str] = []
    result = start_run(
        settings,
        [None],
        get_task("roundtrip"),
        environment=RunEnvironment(worker_factory=_echo),
        warn=warnings.append,
    )
    assert result.run_dir == cli.out.parent / "library"
    assert result.worker_failures == 0 and warnings == []
    from_cli = json.loads((cli.out / "summary.json").read_text())
    assert _stable(result.summary.to_json()) == _stable(from_cli)
    assert [arm["constraint"] for arm in from_cli["arms"]] == ["none", "json"]


def test_start_run_hands_warnings_to_warn_and_prints_nothing(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str]
) -> None:
    def tuned(spec: str | None) -> Any:
        name = spec or "fake-model"
        return fake_model(name, tuning="base" if "base" in name else "instruct")

    cli.monkeypatch.setattr("edgebench.runner.start.model_under_test", tuned)
    code, err = cli.start("run", "--limit", "1")
    assert code == 0, err
    capsys.readouterr()
    settings = replace(read_manifest(cli.out).settings, out=cli.out.parent / "mixed")
    warnings: list[str] = []
    start_run(
        settings,
        ["smol", "smol-base"],
        get_task("roundtrip"),
        environment=RunEnvironment(worker_factory=_echo),
        warn=warnings.append,
    )
    assert len(warnings) == 1 and "smol-base is a base model" in warnings[0]
    assert capsys.readouterr() == ("", "")


def test_start_run_takes_a_run_kind_and_refuses_a_bad_option_in_one_line(
    cli: RoundtripCli,
) -> None:
    code, err = cli.start("run", "--limit", "1")
    assert code == 0, err
    settings = read_manifest(cli.out).settings
    kind = ConsistencyRun(samples=2, temperatures=(0.5,), seed=1)
    result = start_run(
        replace(settings, out=cli.out.parent / "consistency"),
        [None],
        get_task("roundtrip"),
        kind,
        environment=RunEnvironment(worker_factory=_echo),
    )
    assert read_manifest(result.run_dir).kind == "consistency"
    with pytest.raises(UserError, match="--stratify depth: give the sample size with --sample N"):
        start_run(
            replace(settings, out=cli.out.parent / "bad", limit=None, stratify="depth"),
            [None],
            get_task("roundtrip"),
        )
    assert not (cli.out.parent / "bad").exists()


def test_the_python_example_of_the_running_guide_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/guides/running.md's "Use edgebench from Python", as written, on the fake model."""
    page = (Path(__file__).parents[3] / "docs/guides/running.md").read_text()
    section = page.split("## Use edgebench from Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    use_fake_model(monkeypatch, _echo)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "running.md", "exec"), {})
    out = capsys.readouterr().out
    assert "fake-model none {" in out and "fake-model mask {" in out
    assert f"run folder: {Path('runs/from-python')}" in out
    assert (tmp_path / "runs/from-python/summary.json").is_file()
