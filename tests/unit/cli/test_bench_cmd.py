"""`edgebench bench` in this process: its one-line errors by kind (the user's mistake
exits 2, a crashed worker 1) and what it prints; workers are in-process fakes. (Bad
options: test_bad_options.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.cli.app import main
from tests.helpers.bench_fakes import SpeedWorkers, fake_start_worker
from tests.helpers.bench_report import completed_bench
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.gguf_factory import SAMPLE_TENSORS, isolate, sample_metadata, write_gguf


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str]) -> None:
    isolate(monkeypatch, tmp_path)


def test_context_larger_than_the_model_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    metadata = sample_metadata()
    metadata["llama.context_length"] = 256
    path = write_gguf(tmp_path / "tiny.gguf", metadata, tensors=SAMPLE_TENSORS)
    code, err = run_cli(capsys, "bench", "--model", str(path), "-p", "512", "-n", "0")
    assert_one_line_error(code, err, "training context (256)")


def test_a_bench_prints_the_table_and_where_the_json_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_start_worker(monkeypatch, SpeedWorkers())
    path = write_gguf(tmp_path / "tiny.gguf")
    out = tmp_path / "bench.json"
    args = ["--model", str(path), "-t", "1,2", "-p", "8", "-n", "2", "-r", "2"]
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", *args, "--out", str(out)])
    captured = capsys.readouterr()
    assert not exit_info.value.code, captured.err
    assert "pp8" in captured.out and "tg2" in captured.out and "tiny" in captured.out
    assert f"results: {out}" in " ".join(captured.err.split())
    completed_bench(out, (1, 2), ("pp8", "tg2"))


def test_a_crashed_worker_is_a_run_failure_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_start_worker(monkeypatch, SpeedWorkers(die_at=2))
    path = write_gguf(tmp_path / "tiny.gguf")
    out = tmp_path / "bench.json"
    code, err = run_cli(
        capsys, "bench", "--model", str(path), "-t", "1,2", "-p", "8", "-n", "0", "--out", str(out)
    )
    # The progress bar's last state stays above the error, which is one line.
    *progress, error = err.strip().splitlines()
    assert all(line.startswith("threads 1,2") for line in progress)
    assert_one_line_error(
        code, error, "SIGSEGV", f"what was measured is kept in {out}", exit_code=1
    )
    assert json.loads(out.read_text())["status"] == "crashed"
