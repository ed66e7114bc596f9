"""Datasets and schemas from strangers, through `edgebench run`: a bad line is a one-line
error naming file and line, and a schema's remote $ref is refused without being fetched,
before any model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import assert_one_line_error, run_cli


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    schemas = tmp_path / "schemas" / "simple"
    schemas.mkdir(parents=True)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    (schemas / "thing.json").write_text(json.dumps(schema))
    row = {"id": "r1", "schema_id": "thing", "prompt": "a is 1", "expected_output": {"a": 1}}
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"{oops", "not valid JSON"),
        (
            b'{"id": "r2", "schema_id": "thing", "prompt": "\xff\xfe", "expected_output": {}}',
            "not UTF-8 text",
        ),
        (
            b'{"id": "r2", "schema_id": "thing", "prompt": "x", "expected_output": NaN}',
            "NaN is not valid JSON",
        ),
        (
            b'{"id": "r2", "schema_id": "thing", "prompt": "x", "expected_output": '
            + b"9" * 5000
            + b"}",
            "integer with 5000 digits is too long",
        ),
        (
            b'{"id": "r2", "expected_output": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "nested too deeply",
        ),
    ],
)
def test_a_bad_dataset_line_is_a_one_line_error_with_file_and_line(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path, line: bytes, message: str
) -> None:
    with dataset.open("ab") as handle:
        handle.write(line + b"\n")
    out = tmp_path / "run"
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--out", str(out))
    assert_one_line_error(code, err, message)
    assert f"{dataset}:2:" in " ".join(err.split())
    assert not out.exists()  # refused before a run folder was made


def test_a_schema_with_an_http_ref_is_refused_without_opening_a_socket(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path, no_network: list[str]
) -> None:
    schema_file = dataset.parent / "schemas" / "simple" / "thing.json"
    schema = {"type": "object", "properties": {"a": {"$ref": "http://example.com/a.json"}}}
    schema_file.write_text(json.dumps(schema))
    out = tmp_path / "run"
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--out", str(out))
    assert_one_line_error(code, err)
    err = " ".join(err.split())
    assert str(schema_file) in err
    assert "'http://example.com/a.json' points outside the schema" in err
    assert no_network == []
    assert not out.exists()
