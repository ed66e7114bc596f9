"""The DeepJSONEval reader (tasks/formats/deepjson.py), .jsonl and .xlsx: `edgebench run`
and `edgebench data validate` read a file with it, so a bad file gives both the same
one-line error (exit 2, no traceback); the ground-truth check: run --strict-data refuses
the first failure, validate lists them all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.data_cmd import data_app
from edgebench.tasks.formats.deepjson import deepjson_row, read_deepjson
from tests.helpers.cli import cli_error
from tests.helpers.dataset_files import (
    DEEP,
    NO_MODEL,
    append,
    assert_line_refused,
    dataset_error,
    lines,
)

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


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """A small, good DeepJSONEval .jsonl file (3 rows)."""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(lines(DEEP_ROWS))
    return path


def deep_errors(capsys: pytest.CaptureFixture[str], dataset: Path) -> str:
    """`run` and `data validate` on a DeepJSONEval file: the same line, returned once."""
    return dataset_error(capsys, dataset, "--task", "deepjson")


# --- the acceptance cases: 100,000 levels deep and NaN ----------------------------------


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


# --- every other bad input: one line naming file, line and column, from both commands ---

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


def bad_row(changes: dict) -> bytes:
    """The first good row with a new id and `changes` (None: the column left out)."""
    row = {**DEEP_ROWS[0], "id": "m9", **changes}
    return json.dumps({k: v for k, v in row.items() if v is not None}).encode()


BAD_LINES = [
    *((bad_row(changes), message) for changes, message in DEEP_BAD_ROWS),
    (b"{oops", ":4: not valid JSON (Expecting property name"),
    (b'"just a string"', ":4: expected a JSON object, got string"),
    (b'{"text": "\xfe"}', ":4: not UTF-8 text (byte "),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_bad_line(
    capsys: pytest.CaptureFixture[str], deep: Path, line: bytes, message: str
) -> None:
    assert_line_refused(capsys, deep, line, message, "--task", "deepjson")


def test_deepjson_wrong_suffix_and_empty_file(
    capsys: pytest.CaptureFixture[str], deep: Path
) -> None:
    csv = deep.rename(deep.with_suffix(".csv"))
    assert deep_errors(capsys, csv) == (
        f"error: {csv}: unsupported dataset format '.csv' (deepjson reads .jsonl or .xlsx)"
    )
    deep.write_text("\n")
    assert deep_errors(capsys, deep) == f"error: {deep}: no examples (the file is empty)"


# --- the ground-truth check: run --strict-data refuses the first, validate lists them all --


def test_ground_truth_run_strict_refuses_the_first_validate_lists_every_one(
    capsys: pytest.CaptureFixture[str], deep: Path
) -> None:
    rows = [
        {**DEEP_ROWS[0], "json": {"Year": "2021", "Ratings": []}},
        DEEP_ROWS[1],
        {**DEEP_ROWS[2], "json": {"Ratings": []}},
    ]
    deep.write_bytes(lines(rows))
    args = ["--task", "deepjson", "--model", NO_MODEL, "--dataset", str(deep), "--strict-data"]
    from_run = cli_error(capsys, "run", *args)
    assert from_run == (
        f"error: {deep}:1: example 'm2021': the expected output does not match its schema "
        "($.Year: '2021' is not of type 'number') (--strict-data)"
    )
    result = CliRunner().invoke(
        data_app, ["validate", "--task", "deepjson", "--dataset", str(deep)]
    )
    assert result.exit_code == 1, result.output
    assert "object validates against its schema: 2 problems" in result.output
    assert "m2021 (line 1): $.Year: '2021' is not of type 'number'" in result.output
    assert "m2023 (line 3): $: 'Year' is a required property" in result.output


# --- size rules: a user's small file passes; --builtin applies the built-in set's sizes ----


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


# --- what the reader returns -------------------------------------------------------------


def test_the_reader_returns_typed_rows(deep: Path) -> None:
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
