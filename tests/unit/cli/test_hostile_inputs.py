"""Datasets and schemas from strangers, through `edgebench run`: a bad line is a one-line
error naming file and line, and a schema's remote $ref is refused without being fetched,
before any model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.io import read_jsonl
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.cli_model import use_fake_model


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


def nested(levels: int) -> dict[str, object]:
    """A schema `levels` deep in `properties` (2 JSON levels each)."""
    schema: dict[str, object] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


DEPENDENCIES = {"type": "object", "dependencies": {"a": {}, "b": ["a"]}}
OUTPUT = '{"b": 1}'  # breaks DEPENDENCIES: b needs a


def test_a_schema_nested_170_levels_is_one_line_with_depth_and_limit(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    """It was a RecursionError in jsonschema's check_schema; the limit is checked first."""
    schema_file = dataset.parent / "schemas" / "simple" / "thing.json"
    schema_file.write_text(json.dumps(nested(170)))
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--out", str(tmp_path / "r"))
    assert_one_line_error(code, err, str(schema_file), "341 levels, limit 100")


def test_a_deepjson_schema_nested_too_deeply_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    row = {"schema": json.dumps(nested(170)), "text": "t", "json": "{}", "true_depth": 3}
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(row) + "\n")
    args = ("run", "--task", "deepjson", "--dataset", str(path), "--out", str(tmp_path / "r"))
    code, err = run_cli(capsys, *args)
    assert_one_line_error(code, err, f"{path}:1:", "column 'schema'", "341 levels, limit 100")


def test_a_byte_order_mark_in_a_dataset_is_named(
    capsys: pytest.CaptureFixture[str], dataset: Path, tmp_path: Path
) -> None:
    dataset.write_bytes(b"\xef\xbb\xbf" + dataset.read_bytes())
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--out", str(tmp_path / "r"))
    assert_one_line_error(code, err, f"{dataset}:1:", "byte order mark, BOM")


def test_the_dependencies_schema_runs(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    dataset: Path,
    tmp_path: Path,
) -> None:
    """The one-line reproducer of the schemas that crashed dataset loading: a valid Draft 7
    schema, so the run loads it and scores against it (fake model)."""
    use_fake_model(
        monkeypatch, lambda model, mode: InProcessWorker(FakeBackend(default_output=OUTPUT))
    )
    (dataset.parent / "schemas" / "simple" / "thing.json").write_text(json.dumps(DEPENDENCIES))
    rows = [{"id": "r1", "schema_id": "thing", "prompt": "b is 1", "expected_output": {}}]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "run"
    code, err = run_cli(capsys, "run", "--dataset", str(dataset), "--out", str(out))
    assert code == 0, err
    (sample,) = read_jsonl(out / "samples.jsonl")
    assert sample["scores"]["edgejson"]["schema_compliance"] == 0
    assert "'a' is a dependency of 'b'" in str(sample["score_details"])


@pytest.mark.parametrize("dialect", ["declared", "7"])
def test_the_dependencies_schema_in_the_schemas_task(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    dialect: str,
) -> None:
    """JSONSchemaBench's loader and family under a Draft 7 reading (where `dependencies`
    is a keyword); a variant referencing cannot walk is recorded as unusable, the run
    goes on."""
    folder = tmp_path / "data" / "Github_easy"
    folder.mkdir(parents=True)
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **DEPENDENCIES}
    (folder / "a.json").write_text(json.dumps(draft7))
    crawl = {**draft7, "$id": "http://x.example/s", "properties": {"c": {"$ref": "#q"}}}
    crawl["dependencies"] = {"a": {"$id": "#q"}, "b": ["a"]}
    (folder / "b.json").write_text(json.dumps(crawl))
    use_fake_model(
        monkeypatch, lambda model, mode: InProcessWorker(FakeBackend(default_output=OUTPUT))
    )
    out = tmp_path / "run"
    code, err = run_cli(
        capsys,
        *("run", "--task", "schemas", "--dataset", str(tmp_path / "data"), "--out", str(out)),
        *("--metric-param", f"schemas.dialect={dialect}"),
    )
    assert code == 0, err
    first, second = read_jsonl(out / "samples.jsonl")
    assert first["scores"]["schemas"] == {"schema_compliance": 0, "valid_json": 1}
    assert "'a' is a dependency of 'b'" in str(first["score_details"])
    assert second["scores"]["schemas"]["schema_compliance"] == 0
    unusable = second["score_details"]["schemas"]["schema_unusable"]
    assert "cannot be used as a JSON Schema" in unusable and "\n" not in unusable
