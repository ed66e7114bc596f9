"""`edgebench run` on bad input: one line on stderr, exit code 2, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.cli.app import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    err = capsys.readouterr().err
    return int(exit_info.value.code or 0), err


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in err


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


def test_unknown_task(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "run", "--task", "poetry")
    assert_one_line_error(code, err, "unknown task 'poetry'")


def test_bad_option_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "run", "--threads", "zero")
    assert code == 2 and "Traceback" not in err and "--threads" in err


def test_unknown_constraint_mode(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--constraint", "none,regex")
    assert_one_line_error(code, err, "--constraint", "unknown mode 'regex'")
