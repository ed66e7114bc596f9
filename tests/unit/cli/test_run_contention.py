"""`edgebench run` on a busy machine, as a user sees it: `--json` carries each arm's
`perf.contended_examples` and `perf.speed_clean`, samples.jsonl each sample's `cpu`
block, and the tables a `not clean` line. The machine is a fake one
(tests/helpers/cpu_times.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.io import read_jsonl
from edgebench.runner import engine
from tests.helpers.cli import stdout_of
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.cpu_times import CLEAN, CONTENDED, always


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    cli = roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": i} for i in range(5)])
    cli.answer_with(FakeBackend(echo=True))
    return cli


def run(cli: RoundtripCli, *args: str) -> str:
    task = ("--task", "roundtrip", "--dataset", str(cli.payloads), "--out", str(cli.out))
    return stdout_of(cli.capsys, "run", *task, "--limit", "5", *args)


@pytest.mark.parametrize(("shares", "clean"), [(CLEAN, True), (CONTENDED, False)])
def test_json_has_the_arms_contention_and_samples_their_cpu_block(
    cli: RoundtripCli, monkeypatch: pytest.MonkeyPatch, shares: tuple[float, float], clean: bool
) -> None:
    monkeypatch.setattr(engine, "CPU_TIMES", always(shares))
    (arm,) = json.loads(run(cli, "--json", "--retime-max", "1"))["arms"]
    assert arm["perf"]["speed_clean"] is clean
    assert arm["perf"]["contended_examples"] == (0 if clean else 5)
    lines = read_jsonl(cli.out / "samples.jsonl")
    assert len(lines) == (5 if clean else 10)  # each contended example re-timed once
    for line in lines:
        assert set(line["cpu"]) == {"others_share", "steal_share", "worker_cpu_s"}
        assert line["cpu"]["others_share"] == shares[0]


def test_the_table_has_a_not_clean_line_for_a_contended_arm(
    cli: RoundtripCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "CPU_TIMES", always(CONTENDED))
    out = run(cli, "--retime", "none")
    (line,) = [line for line in out.splitlines() if line.startswith("not clean:")]
    assert "5 of 5 timed examples" in line and "more than 5% of the CPU" in line
