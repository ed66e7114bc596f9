"""One reader per dataset format: `edgebench run` and `edgebench data validate` read a file
the same way, so a bad file gives both the same one-line error (exit 2, no traceback);
the size rules of the built-in set apply only with `--builtin`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.app import main
from edgebench.cli.data_cmd import data_app
from edgebench.datagen.edgejson import Status, run_checks
from edgebench.errors import UserError
from edgebench.tasks.edgejson import load_edgejson
from edgebench.tasks.formats.deepjson import deepjson_row, read_deepjson
from edgebench.tasks.formats.edgejson import read_edgejson
from edgebench.tasks.formats.jsonl import MAX_NESTING
from edgebench.tasks.formats.objects import read_objects

# Given so that `run` can never reach a model download: every input here fails to load
# first, and a file that loaded by mistake would fail on this instead.
NO_MODEL = "/nonexistent/model.gguf"
DEEP = b"[" * 100_000 + b"]" * 100_000
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

MOVIE = {
    "type": "object",
    "properties": {
        "Year": {"type": "number"},
        "Ratings": {
            "type": "array",
            "items": {"type": "object", "properties": {"Source": {"type": "string"}}},
        },
    },
    "required": ["Year", "Ratings"],
}
DEEP_ROWS = [
    {
        "id": f"m{year}",
        "schema": json.dumps(MOVIE),
        "text": f"Released in {year}, the film is rated on {source}.",
        "json": json.dumps({"Year": year, "Ratings": [{"Source": source}]}),
        "category": "movie",
        "true_depth": 3,
    }
    for year, source in ((2021, "IMDb"), (2022, "Metacritic"), (2023, "Letterboxd"))
]


def lines(rows: list[dict]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


@pytest.fixture
def edge(tmp_path: Path) -> Path:
    """A small, good EdgeJSON dataset (3 rows) with its schemas/ folder beside it."""
    (tmp_path / "schemas" / "simple").mkdir(parents=True)
    (tmp_path / "schemas" / "simple" / "reading.json").write_text(json.dumps(READING))
    path = tmp_path / "test.jsonl"
    path.write_bytes(lines(EDGE_ROWS))
    return path


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """A small, good DeepJSONEval .jsonl file (3 rows)."""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(lines(DEEP_ROWS))
    return path


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one line a command prints for unreadable input (exit code 2, no traceback)."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert "Traceback" not in err, err
    found = [line for line in err.splitlines() if line.strip()]
    assert len(found) == 1, err
    return found[0]


def edge_errors(capsys: pytest.CaptureFixture[str], dataset: Path) -> str:
    """`run` and `data validate` on an EdgeJSON file: the same line, returned once."""
    schemas = str(dataset.parent / "schemas")
    from_run = cli_error(
        capsys, "run", "--model", NO_MODEL, "--dataset", str(dataset), "--schemas", schemas
    )
    from_validate = cli_error(
        capsys, "data", "validate", "--dataset", str(dataset), "--schemas", schemas
    )
    assert from_run == from_validate
    return from_run


def deep_errors(capsys: pytest.CaptureFixture[str], dataset: Path) -> str:
    """`run` and `data validate` on a DeepJSONEval file: the same line, returned once."""
    from_run = cli_error(
        capsys, "run", "--task", "deepjson", "--model", NO_MODEL, "--dataset", str(dataset)
    )
    from_validate = cli_error(
        capsys, "data", "validate", "--task", "deepjson", "--dataset", str(dataset)
    )
    assert from_run == from_validate
    return from_run


def append(path: Path, line: bytes) -> Path:
    with path.open("ab") as handle:
        handle.write(line + b"\n")
    return path


# --- the acceptance cases: 100,000 levels deep and NaN, in both formats ----------------


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


def test_deepjson_row_nested_100000_deep(capsys: pytest.CaptureFixture[str], deep: Path) -> None:
    append(deep, b'{"schema": {"type": "object"}, "text": "x", "json": ' + DEEP + b"}")
    assert deep_errors(capsys, deep) == (
        f"error: {deep}:4: not valid JSON (JSON nested too deeply: more than 100 levels)"
    )


def test_deepjson_nan_in_ground_truth(capsys: pytest.CaptureFixture[str], deep: Path) -> None:
    append(deep, b'{"schema": {"type": "object"}, "text": "x", "json": {"a": NaN}}')
    assert deep_errors(capsys, deep) == f"error: {deep}:4: not valid JSON (NaN is not valid JSON)"


def test_deepjson_nan_inside_a_json_string_column(
    capsys: pytest.CaptureFixture[str], deep: Path
) -> None:
    row = {"schema": {"type": "object"}, "text": "x", "json": '{"a": NaN}'}
    append(deep, json.dumps(row).encode())
    assert deep_errors(capsys, deep) == (
        f"error: {deep}:4: column 'json' is not valid JSON (NaN is not valid JSON)"
    )


# --- every other bad input: one line naming file, line and field, from both commands ----

EDGE_BAD_LINES = [
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


def test_edgejson_just_over_the_nesting_limit(
    capsys: pytest.CaptureFixture[str], edge: Path
) -> None:
    # The row object is one level, its expected output the other MAX_NESTING.
    deep = b"[" * MAX_NESTING + b"]" * MAX_NESTING
    row = b'{"id": "r4", "schema_id": "reading", "prompt": "x", "expected_output": ' + deep + b"}"
    append(edge, row)
    assert "more than 100 levels" in edge_errors(capsys, edge)
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


DEEP_BAD_ROWS = [
    ({"text": None}, ":4: missing column 'text'"),
    ({"schema": None}, ":4: missing column 'schema'"),
    ({"json": None}, ":4: missing column 'json'"),
    ({"text": "  "}, ":4: column 'text' must be a non-empty string"),
    ({"text": 7}, ":4: column 'text' must be a non-empty string"),
    ({"schema": "{oops"}, ":4: column 'schema' is not valid JSON (Expecting property name"),
    ({"schema": "[1]"}, ":4: column 'schema' must be a JSON object, got array"),
    ({"schema": {"type": 12}}, ":4: schema: invalid JSON Schema at $.type: "),
    ({"json": "9" * 5000}, ":4: column 'json' is not valid JSON (integer with 5000 digits"),
    ({"true_depth": "deep"}, ":4: column 'true_depth' must be a whole number, got 'deep'"),
    ({"true_depth": True}, ":4: column 'true_depth' must be a whole number, got True"),
    ({"id": ["a"]}, ":4: column 'id' must be a string"),
    ({"id": True}, ":4: column 'id' must be a string"),
    ({"id": "m2021"}, ":4: duplicate id 'm2021' (first at "),
    ({"category": 5}, ":4: column 'category' must be a string"),
    ({"meta": [1]}, ":4: column 'meta' must be a JSON object, got array"),
]


@pytest.mark.parametrize(("changes", "message"), DEEP_BAD_ROWS)
def test_deepjson_bad_row(
    capsys: pytest.CaptureFixture[str], deep: Path, changes: dict, message: str
) -> None:
    row = {**DEEP_ROWS[0], "id": "m9", **changes}
    append(deep, json.dumps({k: v for k, v in row.items() if v is not None}).encode())
    assert f"error: {deep}{message}" in deep_errors(capsys, deep)


DEEP_BAD_LINES = [
    (b"{oops", ":4: not valid JSON (Expecting property name"),
    (b'"just a string"', ":4: expected a JSON object, got string"),
    (b'{"text": "\xfe"}', ":4: not UTF-8 text (byte "),
]


@pytest.mark.parametrize(
    ("task", "line", "message"),
    [("edgejson", *case) for case in EDGE_BAD_LINES]
    + [("deepjson", *case) for case in DEEP_BAD_LINES],
)
def test_bad_line(
    capsys: pytest.CaptureFixture[str], edge: Path, deep: Path, task: str, line: bytes, message: str
) -> None:
    dataset, errors = (edge, edge_errors) if task == "edgejson" else (deep, deep_errors)
    append(dataset, line)
    assert f"error: {dataset}{message}" in errors(capsys, dataset)


def test_deepjson_wrong_suffix_and_empty_file(
    capsys: pytest.CaptureFixture[str], deep: Path
) -> None:
    csv = deep.rename(deep.with_suffix(".csv"))
    assert deep_errors(capsys, csv) == (
        f"error: {csv}: unsupported dataset format '.csv' (deepjson reads .jsonl or .xlsx)"
    )
    deep.write_text("\n")
    assert deep_errors(capsys, deep) == f"error: {deep}: no examples (the file is empty)"


# --- the ground-truth check: run refuses at the first failure, validate lists them all -----


def test_ground_truth_run_refuses_the_first_validate_lists_every_one(
    capsys: pytest.CaptureFixture[str], deep: Path
) -> None:
    rows = [
        {**DEEP_ROWS[0], "json": {"Year": "2021", "Ratings": []}},
        DEEP_ROWS[1],
        {**DEEP_ROWS[2], "json": {"Ratings": []}},
    ]
    deep.write_bytes(lines(rows))
    from_run = cli_error(
        capsys, "run", "--task", "deepjson", "--model", NO_MODEL, "--dataset", str(deep)
    )
    assert from_run == (
        f"error: {deep}:1: the ground truth does not match its schema "
        "($.Year: '2021' is not of type 'number')"
    )
    result = CliRunner().invoke(
        data_app, ["validate", "--task", "deepjson", "--dataset", str(deep)]
    )
    assert result.exit_code == 1, result.output
    assert "object validates against its schema: 2 problems" in result.output
    assert "m2021 (line 1): $.Year: '2021' is not of type 'number'" in result.output
    assert "m2023 (line 3): $: 'Year' is a required property" in result.output


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


def test_small_deepjson_file_passes_and_fails_the_size_rules_with_builtin(deep: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(data_app, ["validate", "--task", "deepjson", "--dataset", str(deep)])
    assert ok.exit_code == 0, ok.output
    assert "all 5 checks passed (2 not checked)" in ok.output
    strict = runner.invoke(
        data_app, ["validate", "--task", "deepjson", "--builtin", "--dataset", str(deep)]
    )
    assert strict.exit_code == 1, strict.output
    assert "depth 3: 3 examples" in strict.output and "1 domains" in strict.output
    assert "2 of 7 checks failed" in strict.output


def test_without_arguments_the_built_in_set_is_checked_with_its_size_rules() -> None:
    result = CliRunner().invoke(data_app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "at least 150 rows" in result.output and "not checked" not in result.output
    help_text = CliRunner().invoke(data_app, ["validate", "--help"]).output
    assert "--builtin" in help_text and "Example: edgebench data validate" in help_text


# --- .xlsx: the same reader for run and validate ----------------------------------------


def write_xlsx(path: Path, rows: list[dict]) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    header = ["id", "schema", "text", "json", "category", "true_depth"]
    workbook.active.append(header)
    for row in rows:
        workbook.active.append([row.get(name) for name in header])
    workbook.save(path)
    return path


def test_validate_reads_xlsx_like_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "deep.xlsx", DEEP_ROWS)
    result = CliRunner().invoke(
        data_app, ["validate", "--task", "deepjson", "--dataset", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert [row.place for row in read_deepjson(path)] == ["row 2", "row 3", "row 4"]
    write_xlsx(path, [*DEEP_ROWS, {**DEEP_ROWS[0], "id": "m9", "json": '{"Year": NaN}'}])
    assert deep_errors(capsys, path) == (
        f"error: {path}: row 5: column 'json' is not valid JSON (NaN is not valid JSON)"
    )


# --- what the readers return ------------------------------------------------------------


def test_readers_return_typed_rows(edge: Path, deep: Path, tmp_path: Path) -> None:
    data = read_edgejson(edge, edge.parent / "schemas")
    assert [(row.line, row.id, row.complexity) for row in data.rows] == [
        (1, "r1", "simple"),
        (2, "r2", None),
        (3, "r3", None),
    ]
    assert {data.complexity_of(row) for row in data.rows} == {"simple"}
    assert data.schemas["reading"].schema == READING and data.schema_files == 1
    first = read_deepjson(deep)[0]
    assert (first.id, first.where, first.place, first.domain, first.depth) == (
        "m2021",
        f"{deep}:1",
        "line 1",
        "movie",
        3,
    )
    assert first.schema == MOVIE and first.expected == {
        "Year": 2021,
        "Ratings": [{"Source": "IMDb"}],
    }
    assert deepjson_row({**DEEP_ROWS[0], "id": 7}, "where", "default").id == "7"  # .xlsx ids
    assert deepjson_row({**DEEP_ROWS[0], "id": ""}, "where", "default").id == "default"
    objects = tmp_path / "objects.jsonl"
    objects.write_text('{"a": 1}\n\n{"b": [2]}\n')
    assert read_objects(objects) == [(1, {"a": 1}), (3, {"b": [2]})]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("o.jsonl", '{"a": NaN}\n', "o.jsonl:1: not valid JSON (NaN is not valid JSON)"),
        ("o.jsonl", "[[" * 60 + "]]" * 60 + "\n", "o.jsonl:1: not valid JSON (JSON nested too"),
        ("o.json", '{"a": 1}\n', "o.json: unsupported dataset format '.json' (roundtrip reads"),
    ],
)
def test_roundtrip_corpus_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(UserError, match=re.escape(message)):
        read_objects(path)
    err = cli_error(
        capsys, "run", "--task", "roundtrip", "--model", NO_MODEL, "--dataset", str(path)
    )
    assert message in err
