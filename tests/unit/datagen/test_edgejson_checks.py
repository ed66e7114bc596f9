"""`edgebench data validate` and the dataset checks behind it."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.data_cmd import data_app
from edgebench.datagen.edgejson import Status, run_checks
from edgebench.datagen.edgejson.text_checks import key_value_share
from edgebench.errors import UserError
from edgebench.resources import resource_dir
from edgebench.tasks.formats.edgejson import read_edgejson
from tests.helpers.cli import assert_one_line_error, run_cli

BUILTIN = resource_dir("data") / "edgejson"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A writable copy of the built-in dataset."""
    shutil.copytree(BUILTIN, tmp_path / "edgejson")
    return tmp_path / "edgejson"


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "test.jsonl").read_text().splitlines()]


def _save(folder: Path, rows: list[dict]) -> None:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (folder / "test.jsonl").write_text(text)


def _results(folder: Path) -> dict[str, object]:
    dataset = read_edgejson(folder / "test.jsonl", folder / "schemas")
    return {result.name: result for result in run_checks(dataset, builtin=True)}


def test_all_checks_pass_on_the_committed_data() -> None:
    results = _results(BUILTIN)
    assert {name: r.status for name, r in results.items() if r.status is not Status.PASS} == {}
    assert "simple 80, medium 72, complex 48" in results["at least 150 rows"].detail


def test_corrupted_total_is_caught(copy: Path) -> None:
    rows = _rows(copy)
    receipt = next(row for row in rows if row["schema_id"] == "grocery_receipt")
    receipt["expected_output"]["total"] = round(receipt["expected_output"]["total"] + 1.5, 2)
    _save(copy, rows)
    result = _results(copy)["derived totals"]
    assert result.status is Status.FAIL
    assert receipt["id"] in result.problems[0] and "subtotal + tax" in result.problems[0]


def test_duplicate_prompt_is_caught(copy: Path) -> None:
    rows = _rows(copy)
    rows[5]["prompt"] = rows[4]["prompt"].upper()  # case and spacing do not make it new
    _save(copy, rows)
    result = _results(copy)["no duplicate prompts"]
    assert result.status is Status.FAIL
    assert "line 5" in result.problems[0] and "line 6" in result.problems[0]


def test_bad_json_line_names_file_and_line(copy: Path) -> None:
    with (copy / "test.jsonl").open("a") as handle:
        handle.write('{"id": "broken",\n')
    with pytest.raises(UserError, match=r"test\.jsonl:201: not valid JSON"):
        read_edgejson(copy / "test.jsonl", copy / "schemas")


def test_row_without_prompt_names_the_field(copy: Path) -> None:
    rows = _rows(copy)
    del rows[2]["prompt"]
    _save(copy, rows)
    with pytest.raises(UserError, match=r"test\.jsonl:3: missing field 'prompt'"):
        read_edgejson(copy / "test.jsonl", copy / "schemas")


def test_unknown_schema_id_is_refused_by_the_reader(copy: Path) -> None:
    rows = _rows(copy)
    rows[0]["schema_id"] = "no_such_schema"
    _save(copy, rows)
    with pytest.raises(UserError, match=r"test\.jsonl:1: unknown schema 'no_such_schema'"):
        read_edgejson(copy / "test.jsonl", copy / "schemas")


def test_invalid_output_is_listed_with_the_jsonschema_message(copy: Path) -> None:
    rows = _rows(copy)
    line = next(i for i, row in enumerate(rows) if row["schema_id"] == "thermostat_setpoint")
    rows[line]["expected_output"]["mode"] = "turbo"
    _save(copy, rows)
    result = _results(copy)["expected outputs match schemas"]
    assert result.status is Status.FAIL
    expected = f"{rows[line]['id']} (line {line + 1}): at mode: 'turbo' is not one"
    assert result.problems[0].startswith(expected)


def test_complexity_bounds_flag_a_nested_simple_schema(copy: Path) -> None:
    path = copy / "schemas" / "simple" / "battery_alert.json"
    schema = json.loads(path.read_text())
    schema["properties"]["device"] = {"type": "object", "properties": {"a": {"type": "string"}}}
    path.write_text(json.dumps(schema))
    result = _results(copy)["complexity bounds"]
    assert result.status is Status.FAIL
    assert "battery_alert (simple" in result.problems[0] and "nesting depth 1" in result.problems[0]


def test_public_style_rows_take_complexity_from_the_schema_folder(copy: Path) -> None:
    rows = _rows(copy)
    for row in rows:  # some public v3 rows carry schema_name and no complexity
        del row["complexity"]
        row["schema_name"] = row["schema_id"]
    _save(copy, rows)
    results = _results(copy)
    assert results["at least 150 rows"].status is Status.PASS
    assert "simple 80, medium 72, complex 48" in results["at least 150 rows"].detail


def test_totals_of_schemas_we_did_not_write_are_not_checked(copy: Path) -> None:
    rows = _rows(copy)
    for row in rows:
        if row["schema_id"] == "grocery_receipt":
            row["expected_output"]["total"] += 5
    _save(copy, rows)
    path = copy / "schemas" / "complex" / "grocery_receipt.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "title": "Someone else's"}))
    result = _results(copy)["derived totals"]
    assert result.status is Status.PASS and result.problems == ()
    assert "1 schemas with unknown derivation rules not checked" in result.detail


def test_form_like_prompts_fail_the_prose_heuristic() -> None:
    assert key_value_share("Order\n\nOrder Id: 7\nTotal: 12.5\n\nExtract it as JSON.") > 0.25
    assert key_value_share("At 09:30 the door was locked.\n\nExtract it as JSON.") == 0


def test_validate_command_exit_codes(copy: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(data_app, ["validate", str(copy)])
    assert ok.exit_code == 0, ok.output
    rows = _rows(copy)
    rows[1]["prompt"] = rows[0]["prompt"]
    _save(copy, rows)
    failed = runner.invoke(data_app, ["validate", "--dataset", str(copy / "test.jsonl")])
    assert failed.exit_code == 1 and "no duplicate prompts" in failed.output
    missing = runner.invoke(data_app, ["validate", str(copy / "nowhere")])
    assert isinstance(missing.exception, UserError)


def test_generate_command_writes_and_help_shows_an_example(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        data_app, ["generate", "edgejson", "--out", str(tmp_path), "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "test.jsonl").is_file() and (tmp_path / "generation.json").is_file()
    for command in (["generate", "edgejson"], ["validate"]):
        help_text = runner.invoke(data_app, [*command, "--help"]).output
        assert "Example: edgebench data" in help_text


def test_unreadable_input_exits_2_with_one_line_naming_file_and_line(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (copy / "test.jsonl").write_text('{"id": "a"}\nnot json\n')
    code, err = run_cli(capsys, "data", "validate", str(copy))
    assert_one_line_error(code, err, f"{copy / 'test.jsonl'}:1: missing field 'schema_id'")


def test_task_loader_reads_the_built_in_data() -> None:
    from edgebench.tasks.edgejson import load_edgejson

    examples = load_edgejson(BUILTIN / "test.jsonl", BUILTIN / "schemas")
    assert len(examples) == 200
    assert {e.groups["complexity"] for e in examples} == {"simple", "medium", "complex"}


def test_a_schema_folder_that_is_no_complexity_fails_its_bounds(copy: Path) -> None:
    (copy / "schemas" / "simple").rename(copy / "schemas" / "misc")  # `run` takes any name
    rows = _rows(copy)
    for row in rows:
        del row["complexity"]  # the folder decides
    _save(copy, rows)
    result = _results(copy)["complexity bounds"]
    assert result.status is Status.FAIL
    assert "battery_alert: folder misc/ is not a complexity (simple, medium, complex)" in (
        result.problems
    )
    assert "misc 80" in _results(copy)["at least 150 rows"].detail


def test_a_pathological_pattern_cannot_hang_the_output_check(copy: Path) -> None:
    path = copy / "schemas" / "simple" / "battery_alert.json"
    schema = json.loads(path.read_text())
    name = next(key for key, prop in schema["properties"].items() if prop["type"] == "string")
    schema["properties"][name]["pattern"] = "^(a+)+$"
    path.write_text(json.dumps(schema))
    rows = _rows(copy)
    row = next(row for row in rows if row["schema_id"] == "battery_alert")
    row["expected_output"][name] = "a" * 50_000 + "!"
    _save(copy, rows)
    start = time.perf_counter()
    result = _results(copy)["expected outputs match schemas"]
    assert time.perf_counter() - start < 10
    assert result.status is Status.FAIL
    assert any(f"{row['id']} (line" in p and "not checked against" in p for p in result.problems)
