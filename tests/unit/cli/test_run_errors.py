"""`edgebench run` in this process when something is wrong: one line on stderr, no
traceback, and the exit code by kind: 2 for the user's mistake (bad input, the wrong
command for a folder), 1 for a run that could not finish (the model worker crashed on
every example until the arm gave up)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.io import read_jsonl
from edgebench.isolation import WorkerError
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.cli_model import (
    RoundtripCli,
    assert_resume_names_the_command,
    assert_run_ends_with_error,
    roundtrip_cli,
)
from tests.helpers.faults import DyingWorker
from tests.helpers.run_folder import manifest_of, summary_of


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    schemas = tmp_path / "schemas" / "simple"
    schemas.mkdir(parents=True)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    (schemas / "thing.json").write_text(json.dumps(schema))
    row = {"id": "r1", "schema_id": "thing", "prompt": "a is 1", "expected_output": {"a": 1}}
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def test_unknown_model_name(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    code, err = run_cli(capsys, "run", "--model", "smollm3-135m", "--dataset", str(dataset))
    assert_one_line_error(code, err, "smollm3-135m")


def test_missing_model_file(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    code, err = run_cli(capsys, "run", "--model", "/nope/model.gguf", "--dataset", str(dataset))
    assert_one_line_error(code, err, "/nope/model.gguf")


def test_model_file_that_is_not_gguf(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 this is a zip")
    code, err = run_cli(capsys, "run", "--model", str(fake), "--dataset", str(dataset))
    assert_one_line_error(code, err, "not a GGUF file", str(fake))


def test_dataset_line_that_is_not_json(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    with dataset.open("a") as handle:
        handle.write("{oops\n")
    code, err = run_cli(capsys, "run", "--dataset", str(dataset))
    assert_one_line_error(code, err, f"{dataset}:2", "not valid JSON")


def test_unknown_schema_id(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    row = {"id": "r2", "schema_id": "gadget", "prompt": "x", "expected_output": {}}
    with dataset.open("a") as handle:
        handle.write(json.dumps(row) + "\n")
    code, err = run_cli(capsys, "run", "--dataset", str(dataset))
    assert_one_line_error(code, err, f"{dataset}:2", "unknown schema 'gadget'")


def test_missing_dataset_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run_cli(capsys, "run", "--dataset", str(tmp_path / "none.jsonl"))
    assert_one_line_error(code, err, "none.jsonl")


def test_schemas_task_dataset_mistakes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """--task schemas reads a folder like JSONSchemaBench's data/: each mistake one line."""
    code, err = run_cli(capsys, "run", "--task", "schemas")
    assert_one_line_error(code, err, "--task schemas needs --dataset")
    code, err = run_cli(capsys, "run", "--task", "schemas", "--dataset", str(tmp_path / "no"))
    assert_one_line_error(code, err, "no: dataset folder not found")
    (tmp_path / "data" / "Snowplow").mkdir(parents=True)
    code, err = run_cli(capsys, "run", "--task", "schemas", "--dataset", str(tmp_path))
    assert_one_line_error(code, err, "no schema files")
    bad = tmp_path / "data" / "Snowplow" / "broken.json"
    bad.write_text('{"type": ')
    code, err = run_cli(capsys, "run", "--task", "schemas", "--dataset", str(tmp_path))
    assert_one_line_error(code, err, str(bad), "not valid JSON")


def test_unknown_task(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "run", "--task", "poetry")
    assert_one_line_error(code, err, "unknown task 'poetry'")


def test_bad_option_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "run", "--threads", "zero")
    assert code == 2 and "Traceback" not in err and "--threads" in err


def test_unknown_constraint_mode(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--constraint", "none,regex")
    assert_one_line_error(code, err, "--constraint", "unknown mode 'regex'")


def test_unknown_prompt_style(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--prompt", "paper")
    assert_one_line_error(code, err, "--prompt: unknown style 'paper'", "default, reference")


def test_a_task_without_a_reference_prompt(
    capsys: pytest.CaptureFixture[str], dataset: Path
) -> None:
    code, err = run_cli(capsys, "run", "--task", "roundtrip", "--prompt", "reference")
    assert_one_line_error(code, err, "task 'roundtrip' has no published prompt")
    code, err = run_cli(capsys, "consistency", "--task", "roundtrip", "--prompt", "reference")
    assert_one_line_error(code, err, "task 'roundtrip' has no published prompt")


def test_resume_and_another_out_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = run_cli(capsys, "run", "--resume", str(tmp_path), "--out", str(tmp_path / "other"))
    assert_one_line_error(code, err, "give the run folder once")


def test_resume_of_a_folder_that_is_no_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = run_cli(capsys, "run", "--resume", str(tmp_path))
    assert_one_line_error(code, err, f"{tmp_path}: not a run folder (no manifest.json)")


# -- with the fake model (tests/helpers/cli_model.py) ---------------------------------------


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    """Four roundtrip examples."""
    return roundtrip_cli(capsys, monkeypatch, tmp_path, [{"k": i} for i in range(4)])


def test_run_resume_of_a_consistency_folder_names_edgebench_consistency(
    cli: RoundtripCli,
) -> None:
    cli.answer_with(FakeBackend(sampled=['{"k": 0}', "{}"]))
    assert_resume_names_the_command(cli, "consistency", "--samples", "2")


def test_a_worker_that_dies_on_every_example_ends_the_run_with_exit_1(cli: RoundtripCli) -> None:
    cli.workers(lambda model, mode: DyingWorker(FakeBackend()))
    code, err = cli.start("run", "--max-crashes", "2")
    assert_run_ends_with_error(
        code,
        err,
        "gave up on fake-model, none after 2 failed examples in a row (--max-crashes 2)",
        "was killed by SIGKILL",
        f"0 completed examples kept in {cli.out}",
        exit_code=1,
    )
    samples = read_jsonl(cli.out / "samples.jsonl")
    assert [s["finish_reason"] for s in samples] == ["crashed", "crashed"]
    manifest = manifest_of(cli.out)
    assert manifest["status"] == "crashed" and manifest["arms"][0]["status"] == "crashed"
    assert manifest["error"].startswith("gave up on fake-model, none")
    summary = summary_of(cli.out)
    assert summary["status"] == "crashed" and summary["arms"][0]["n_crashed"] == 2


def test_a_worker_that_dies_on_one_example_costs_that_example_and_says_how_to_retry(
    cli: RoundtripCli,
) -> None:
    backend = FakeBackend(default_output='{"k": 0}')
    cli.workers(lambda model, mode: DyingWorker(backend, marker="with value 2."))
    code, err = cli.start("run")
    assert code == 0, err
    said = " ".join(err.split())
    assert "1 example(s) lost to a worker crash or timeout" in said
    assert f"`edgebench run --resume {cli.out}` runs them again" in said
    finish = [s["finish_reason"] for s in read_jsonl(cli.out / "samples.jsonl")]
    assert finish == ["json_complete", "json_complete", "crashed", "json_complete"]


class RefusingBackend(FakeBackend):
    """A model file the runtime refuses at load: the user's mistake, raised in the worker."""

    def load(self, n_ctx: int):  # type: ignore[no-untyped-def]
        raise WorkerError("UserError", "model.gguf: unsupported architecture 'mamba9'", "")


def test_a_model_the_worker_refuses_stays_a_user_error_with_exit_2(cli: RoundtripCli) -> None:
    cli.answer_with(RefusingBackend())
    code, err = cli.start("run")
    assert_run_ends_with_error(code, err, "unsupported architecture 'mamba9'", exit_code=2)
    assert manifest_of(cli.out)["status"] == "failed"
