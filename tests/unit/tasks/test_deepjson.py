"""The deepjson task: loading .jsonl and .xlsx, depth, prompt, bad input (the .xlsx safety
checks themselves: tests/unit/tasks/test_xlsx.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.metrics import get_family
from edgebench.metrics.score import score_output
from edgebench.tasks import get_task
from edgebench.tasks.deepjson import (
    DeepJSONTask,
    difficulty_of,
    load_deepjson,
    schema_depth,
    value_depth,
)
from tests.helpers.cli import assert_one_line_error, run_cli

SCHEMA = {
    "title": "Movie",
    "type": "object",
    "required": ["Year", "Ratings"],
    "properties": {
        "Year": {"type": "number", "description": "Release year"},
        "Ratings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["Source"],
                "properties": {"Source": {"type": "string", "enum": ["IMDb", "Metacritic"]}},
            },
        },
    },
}
TRUTH = {"Year": 2023, "Ratings": [{"Source": "IMDb"}]}
TEXT = "Released in 2023, the film holds a rating on IMDb."

# The public sample lives in the workplace's shared/ folder beside the checkout.
PUBLIC = next(
    (
        folder / "shared" / "datasets" / "deepjsoneval" / "sample.jsonl"
        for folder in Path(__file__).resolve().parents
        if (folder / "shared" / "datasets" / "deepjsoneval" / "sample.jsonl").is_file()
    ),
    None,
)


def row(**changes: object) -> dict:
    base = {
        "schema": json.dumps(SCHEMA),
        "text": TEXT,
        "json": json.dumps(TRUTH),
        "category": "movie",
        "true_depth": 3,
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_depth_counts_the_root_as_level_one_and_lists_of_objects_as_one_level():
    assert schema_depth(SCHEMA) == 3  # root, Ratings, Source
    assert value_depth(TRUTH) == 3
    assert schema_depth({"type": "object", "properties": {"a": {"type": "string"}}}) == 2
    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": SCHEMA}}}
    assert schema_depth({"type": "object", "properties": {"x": nested}}) == 4
    assert value_depth({"a": [1, 2], "b": {"c": {}}}) == 3
    assert [difficulty_of(d) for d in (2, 3, 4, 5, 7, 8)] == [
        "outside 3-7",
        "medium",
        "medium",
        "hard",
        "hard",
        "outside 3-7",
    ]


def test_jsonl_rows_with_strings_or_objects(tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(), row(schema=SCHEMA, json=TRUTH, id="x7")])
    examples = load_deepjson(path)
    assert [e.id for e in examples] == ["d-0001", "x7"]
    first = examples[0]
    assert first.schema == SCHEMA and first.expected == TRUTH and first.text == TEXT
    assert first.groups == {"depth": "3", "difficulty": "medium", "domain": "movie"}
    assert first.budget_group == "depth-3"  # the token budget is grouped by depth
    assert examples[1].schema_id == "x7"


def test_depth_and_domain_default_when_absent(tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(true_depth=None, category=None)])
    assert load_deepjson(path)[0].groups == {
        "depth": "3",
        "difficulty": "medium",
        "domain": "unknown",
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"text": None}, "d.jsonl:1: missing column 'text'"),
        ({"schema": "{not json"}, "d.jsonl:1: column 'schema' is not valid JSON"),
        ({"schema": "[1]"}, "column 'schema' must be a JSON object, got array"),
        ({"true_depth": "deep"}, "column 'true_depth' must be a whole number"),
        ({"text": "  "}, "column 'text' must be a non-empty string"),
        ({"schema": json.dumps({"type": 12})}, "invalid JSON Schema"),
    ],
)
def test_bad_rows_are_one_line_errors_naming_file_and_line(tmp_path: Path, changes, message):
    path = write_jsonl(tmp_path / "d.jsonl", [row(**changes)])
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_deepjson(path)


def test_duplicate_ids_empty_files_and_other_formats_are_refused(tmp_path: Path):
    path = write_jsonl(tmp_path / "d.jsonl", [row(id="a"), row(id="a")])
    with pytest.raises(UserError, match=r"d.jsonl:2: duplicate id 'a' \(first at .*d.jsonl:1\)"):
        load_deepjson(path)
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(UserError, match="no examples"):
        load_deepjson(tmp_path / "e.jsonl")
    (tmp_path / "d.csv").write_text("schema,text\n")
    with pytest.raises(UserError, match=r"unsupported dataset format '.csv'"):
        load_deepjson(tmp_path / "d.csv")
    with pytest.raises(UserError, match="--schemas does not apply"):
        DeepJSONTask().resolve_paths(path, tmp_path)


def test_prompt_states_the_task_rules_with_schema_and_text(tmp_path: Path):
    task = get_task("deepjson")
    example = load_deepjson(write_jsonl(tmp_path / "d.jsonl", [row()]))[0]
    prompt = task.build_prompt(example).user
    for rule in ("Map the text to the schema", "Keep the schema's hierarchy",
                 "Extract only what the text says", "```json"):  # fmt: skip
        assert rule in prompt
    assert json.dumps(SCHEMA, separators=(",", ":")) in prompt and prompt.endswith(TEXT)
    assert task.prompt_template.count("{schema}") == 1


def test_an_example_is_scored_by_the_family_the_task_names(tmp_path: Path):
    task = get_task("deepjson")
    (example,) = load_deepjson(write_jsonl(tmp_path / "d.jsonl", [row()]))
    family = get_family(task.metric_family)
    answer = "```json\n" + json.dumps(TRUTH) + "\n```"
    result = score_output([family], answer, example.expected, example.schema)
    assert result.scores == {
        "deepjson": {"syntax": 1, "key_matching": 1.0, "strict": 1, "valid_json": 1}
    }
    assert result.details["deepjson"]["element_scores"] == {
        "number": {"fields": 1, "key_matching": 1.0},
        "enum": {"fields": 1, "key_matching": 1.0},
        "object_list": {"fields": 1, "key_matching": 1.0},
    }


def test_built_in_set_loads_by_default():
    task = DeepJSONTask()
    dataset, schemas = task.resolve_paths(None, None)
    examples = task.load(dataset, schemas)
    assert len(examples) >= 200 and schemas is None
    assert {e.groups["depth"] for e in examples} == {"3", "4", "5", "6", "7"}
    # rows cycle through the depths, so --limit 25 takes five of each
    assert [e.groups["depth"] for e in examples[:5]] == ["3", "4", "5", "6", "7"]


@pytest.mark.skipif(PUBLIC is None, reason="public DeepJSONEval sample absent")
def test_public_sample_loads_and_its_depth_labels_match_the_schemas():
    assert PUBLIC is not None
    examples = load_deepjson(PUBLIC)
    assert len(examples) == 10
    for example in examples:
        assert schema_depth(example.schema) == int(example.groups["depth"])
        assert value_depth(example.expected) == int(example.groups["depth"])


# --- .xlsx ------------------------------------------------------------------------------


def write_xlsx(path: Path, rows: list[dict]) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    header = ["schema", "text", "json", "category", "true_depth"]
    sheet.append(header)
    for r in rows:
        sheet.append([r.get(name) for name in header])
    workbook.save(path)
    return path


def test_xlsx_rows_load_like_jsonl(tmp_path: Path):
    path = write_xlsx(tmp_path / "d.xlsx", [row(), row(true_depth=3.0)])
    examples = load_deepjson(path)
    assert [e.expected for e in examples] == [TRUTH, TRUTH]
    assert examples[1].groups["depth"] == "3"


def test_xlsx_bad_cell_names_the_row(tmp_path: Path):
    path = write_xlsx(tmp_path / "d.xlsx", [row(), row(json="{oops")])
    with pytest.raises(UserError, match=r"d.xlsx: row 3: column 'json' is not valid JSON"):
        load_deepjson(path)


def test_run_with_a_bad_xlsx_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "d.xlsx"
    path.write_bytes(b"\x00" * 64)
    with pytest.raises(UserError, match=r"not an \.xlsx file"):
        load_deepjson(path)
    # the dataset is refused before any model is looked for
    no_model = "/nonexistent/model.gguf"
    code, err = run_cli(
        capsys, "run", "--task", "deepjson", "--model", no_model, "--dataset", str(path)
    )
    assert_one_line_error(code, err, f"{path}: not an .xlsx file")
