"""The EdgeJSON reader (tasks/formats/edgejson.py): `edgebench run` and `edgebench data
validate` read a file with it, so a bad file gives both the same one-line error (exit 2,
no traceback); the built-in set's size rules apply only with `--builtin`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.data_cmd import data_app
from edgebench.datagen.edgejson import Status, run_checks
from edgebench.tasks.edgejson import load_edgejson
from edgebench.tasks.formats.edgejson import read_edgejson
from edgebench.tasks.formats.jsonl import MAX_NESTING
from tests.helpers.dataset_files import DEEP, append, assert_line_refused, dataset_error, lines

RULE = " (built-in set rule: --builtin)"

READING = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"room": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["room", "celsius"],
    "additionalProperties": False,
}
EDGE_ROWS = [
    {
        "id": "r1",
        "schema_id": "reading",
        "complexity": "simple",
        "prompt": "The kitchen sensor read 21.5 degrees this morning.",
        "expected_output": {"room": "kitchen", "celsius": 21.5},
    },
    {
        "id": "r2",
        "schema_id": "reading",
        "schema_name": "reading",
        "prompt": "In the garage it was 8 degrees at noon.",
        "expected_output": {"room": "garage", "celsius": 8},
    },
    {
        "id": "r3",
        "schema_id": "reading",
        "prompt": "Our bedroom thermometer showed 19 degrees overnight.",
        "expected_output": {"room": "bedroom", "celsius": 19},
    },
]


@pytest.fixture
def edge(tmp_path: Path) -> Path:
    """A small, good EdgeJSON dataset (3 rows) with its schemas/ folder beside it."""
    (tmp_path / "schemas" / "simple").mkdir(parents=True)
    (tmp_path / "schemas" / "simple" / "reading.json").write_text(json.dumps(READING))
    path = tmp_path / "test.jsonl"
    path.write_bytes(lines(EDGE_ROWS))
    return path


def edge_errors(capsys: pytest.CaptureFixture[str], dataset: Path) -> str:
    """`run` and `data validate` on an EdgeJSON file: the same line, returned once."""
    return dataset_error(capsys, dataset, *schemas_beside(dataset))


def schemas_beside(dataset: Path) -> tuple[str, str]:
    return ("--schemas", str(dataset.parent / "schemas"))


# --- the acceptance cases: 100,000 levels deep and NaN ----------------------------------


def test_edgejson_row_nested_100000_deep(capsys: pytest.CaptureFixture[str], edge: Path) -> None:
    row = b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": ' + DEEP + b"}"
    append(edge, row)
    assert edge_errors(capsys, edge) == (
        f"error: {edge}:4: not valid JSON (JSON nested too deeply: more than 100 levels)"
    )


def test_edgejson_nan_in_expected_output(capsys: pytest.CaptureFixture[str], edge: Path) -> None:
    row = b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": {"a": NaN}}'
    append(edge, row)
    assert edge_errors(capsys, edge) == f"error: {edge}:4: not valid JSON (NaN is not valid JSON)"


# --- every other bad input: one line naming file, line and field, from both commands ----

BAD_LINES = [
    (b'{"id": "r4", "schema_id": "reading", "prompt": "\xff", "expected_output": {}}',
     ":4: not UTF-8 text (byte "),
    (b"{oops", ":4: not valid JSON (Expecting property name enclosed in double quotes"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": Infinity}',
     ":4: not valid JSON (Infinity is not valid JSON)"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": -Infinity}',
     ":4: not valid JSON (-Infinity is not valid JSON)"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": 1e999}',
     ":4: not valid JSON (number 1e999 is out of range)"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": '
     + b"9" * 5000 + b"}", ":4: not valid JSON (integer with 5000 digits is too long)"),
    (b"[1, 2]", ":4: expected a JSON object, got array"),
    (b'{"schema_id": "reading", "prompt": "x", "expected_output": {}}',
     ":4: missing field 'id'"),
    (b'{"id": "r4", "prompt": "x", "expected_output": {}}', ":4: missing field 'schema_id'"),
    (b'{"id": "r4", "schema_id": "reading", "expected_output": {}}',
     ":4: missing field 'prompt'"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": "x"}',
     ":4: missing field 'expected_output'"),
    (b'{"id": 4, "schema_id": "reading", "prompt": "x", "expected_output": {}}',
     ":4: field 'id' must be a string"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": ["x"], "expected_output": {}}',
     ":4: field 'prompt' must be a string"),
    (b'{"id": "r4", "schema_id": "reading", "complexity": 1, "prompt": "x", '
     b'"expected_output": {}}', ":4: field 'complexity' must be a string"),
    (b'{"id": " ", "schema_id": "reading", "prompt": "x", "expected_output": {}}',
     ":4: field 'id' must not be empty"),
    (b'{"id": "r4", "schema_id": "reading", "prompt": "", "expected_output": {}}',
     ":4: field 'prompt' must not be empty"),
    (b'{"id": "r1", "schema_id": "reading", "prompt": "x", "expected_output": {}}',
     ":4: duplicate id 'r1' (first on line 1)"),
    (b'{"id": "r4", "schema_id": "gauge", "prompt": "x", "expected_output": {}}',
     ":4: unknown schema 'gauge' (no gauge.json under "),
    (b'{"id": "r4", "schema_id": "reading", "complexity": "complex", "prompt": "x", '
     b'"expected_output": {}}', ":4: complexity 'complex' but schema 'reading' is in simple/"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_bad_line(
    capsys: pytest.CaptureFixture[str], edge: Path, line: bytes, message: str
) -> None:
    assert_line_refused(capsys, edge, line, message, *schemas_beside(edge))


def test_edgejson_just_over_the_nesting_limit(
    capsys: pytest.CaptureFixture[str], edge: Path
) -> None:
    # The row object is one level, its expected output the other MAX_NESTING.
    deep = b"[" * MAX_NESTING + b"]" * MAX_NESTING
    row = b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": ' + deep + b"}"
    append(edge, row)
    assert "nested too deeply: 101 levels, limit 100" in edge_errors(capsys, edge)
    # one level less loads
    edge.write_bytes(lines(EDGE_ROWS) + row.replace(b"[]", b"0") + b"\n")
    assert len(load_edgejson(edge, edge.parent / "schemas")) == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"type": "strin"}', "reading.json: invalid JSON Schema at $.type: "),
        ("{not json", "reading.json: not valid JSON (Expecting property name"),
        ('{"type": "object", "maximum": NaN}', "reading.json: not valid JSON (NaN is not valid"),
        ("[1]", "reading.json: expected a JSON object, got array"),
        ('{"$ref": "http://example.com/s.json"}', "'http://example.com/s.json' points outside"),
    ],
)
def test_edgejson_bad_schema_file(
    capsys: pytest.CaptureFixture[str], edge: Path, content: str, message: str
) -> None:
    (edge.parent / "schemas" / "simple" / "reading.json").write_text(content)
    assert message in edge_errors(capsys, edge)


def test_edgejson_schema_file_not_utf8(capsys: pytest.CaptureFixture[str], edge: Path) -> None:
    schema = edge.parent / "schemas" / "simple" / "reading.json"
    schema.write_bytes(b'{"type": "object",\n "title": "\xff"}')
    assert edge_errors(capsys, edge) == f"error: {schema}:2: not UTF-8 text (byte 30)"


def test_edgejson_schema_defined_twice(capsys: pytest.CaptureFixture[str], edge: Path) -> None:
    (edge.parent / "schemas" / "medium").mkdir()
    (edge.parent / "schemas" / "medium" / "reading.json").write_text("{}")
    assert "schema 'reading' also defined in" in edge_errors(capsys, edge)


def test_edgejson_missing_or_empty_files(capsys: pytest.CaptureFixture[str], edge: Path) -> None:
    (edge.parent / "schemas" / "simple" / "reading.json").rename(edge.parent / "reading.json")
    (edge.parent / "schemas" / "simple").rmdir()
    (edge.parent / "schemas").rmdir()
    assert edge_errors(capsys, edge).endswith("schemas: schema folder not found")
    edge.unlink()
    assert edge_errors(capsys, edge) == f"error: {edge}: dataset file not found"
    edge.write_text("\n  \n")
    (edge.parent / "schemas").mkdir()
    assert edge_errors(capsys, edge) == f"error: {edge}: no examples (the file is empty)"


@pytest.mark.parametrize("name", ["test.json", "test.csv", "test.xlsx", "test"])
def test_edgejson_wrong_suffix(capsys: pytest.CaptureFixture[str], edge: Path, name: str) -> None:
    other = edge.rename(edge.with_name(name))
    suffix = other.suffix or name
    assert edge_errors(capsys, other) == (
        f"error: {other}: unsupported dataset format '{suffix}' (edgejson reads .jsonl)"
    )


# --- size rules: a user's small file passes; --builtin applies the built-in set's sizes ----


def test_small_edgejson_file_passes_and_fails_the_size_rules_with_builtin(edge: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(data_app, ["validate", str(edge.parent)])
    assert ok.exit_code == 0, ok.output
    assert "all 7 checks passed (4 not checked)" in ok.output
    sizes = run_checks(read_edgejson(edge, edge.parent / "schemas"), builtin=False)[-2:]
    assert [(r.name, r.status, r.detail) for r in sizes] == [
        ("at least 150 rows", Status.SKIP, "3 rows: simple 3, medium 0, complex 0" + RULE),
        (
            "at least 24 schema types",
            Status.SKIP,
            "1 schema types: simple 1, medium 0, complex 0" + RULE,
        ),
    ]
    strict = runner.invoke(data_app, ["validate", "--builtin", str(edge.parent)])
    assert strict.exit_code == 1, strict.output
    assert "at least 150 rows: 1 problems" in strict.output and "3 rows, need 150" in strict.output
    assert "1 schema types, need 24" in strict.output
    assert "2 of 11 checks failed" in strict.output


def test_without_arguments_the_built_in_set_is_checked_with_its_size_rules() -> None:
    result = CliRunner().invoke(data_app, ["validate"])
    assert result.exit_code == 0, result.output
    # The size rules' rows pass (without them they would say "not checked"); other rows
    # may say which string formats the installed jsonschema cannot check.
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in result.output.splitlines()
        if line.count("│") >= 3
    }
    assert rows["at least 150 rows"] == rows["at least 24 schema types"] == "pass", result.output
    help_text = CliRunner().invoke(data_app, ["validate", "--help"]).output
    assert "--builtin" in help_text and "Example: edgebench data validate" in help_text


# --- what the reader returns -------------------------------------------------------------


def test_the_reader_returns_typed_rows_and_their_schemas(edge: Path) -> None:
    data = read_edgejson(edge, edge.parent / "schemas")
    assert [(row.line, row.id, row.complexity) for row in data.rows] == [
        (1, "r1", "simple"),
        (2, "r2", None),
        (3, "r3", None),
    ]
    assert {data.complexity_of(row) for row in data.rows} == {"simple"}
    assert data.schemas["reading"].schema == READING and data.schema_files == 1
