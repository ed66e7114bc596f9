"""The EdgeJSON task: loading rows and schema folders, checking expected outputs, the
prompt, and scoring through the task's metric family."""

import json
from collections import Counter
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.metrics import get_family
from edgebench.metrics.score import score_output
from edgebench.scoring.parse import parse_json_output
from edgebench.tasks import get_task
from edgebench.tasks.base import Prompt
from edgebench.tasks.edgejson import EdgeJSONTask, check_expected_outputs, load_edgejson

NOTE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"title": {"type": "string"}, "sent": {"type": "string", "format": "date"}},
    "required": ["title"],
}
CART = {
    "type": "object",
    "properties": {"total": {"type": "number"}, "items": {"type": "array"}},
    "required": ["total"],
}
ROW_WITH_COMPLEXITY = {
    "id": "n1",
    "schema_id": "note",
    "complexity": "simple",
    "prompt": "Note titled Hi, sent 2024-01-02.",
    "expected_output": {"title": "Hi", "sent": "2024-01-02"},
}
ROW_WITH_SCHEMA_NAME = {
    "id": "c1",
    "schema_id": "cart",
    "schema_name": "cart",
    "prompt": "Cart total 9.5",
    "expected_output": {"total": 9.5},
}

# The public split lives in the workplace's shared/ folder, beside the checkout.
PUBLIC = next(
    (
        folder / "shared" / "datasets" / "edgejson_v3"
        for folder in Path(__file__).resolve().parents
        if (folder / "shared" / "datasets" / "edgejson_v3" / "train.jsonl").is_file()
    ),
    Path("/nonexistent"),
)


def write_dataset(root: Path, lines: list[str | dict]) -> tuple[Path, Path]:
    schemas = root / "schemas"
    for folder, name, schema in (("simple", "note", NOTE), ("medium", "cart", CART)):
        (schemas / folder).mkdir(parents=True, exist_ok=True)
        (schemas / folder / f"{name}.json").write_text(json.dumps(schema))
    dataset = root / "train.jsonl"
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    dataset.write_text("\n".join(text) + "\n")
    return dataset, schemas


def load_error(tmp_path: Path, lines: list[str | dict]) -> str:
    dataset, schemas = write_dataset(tmp_path, lines)
    with pytest.raises(UserError) as info:
        load_edgejson(dataset, schemas)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_both_row_variants_and_blank_lines(tmp_path):
    dataset, schemas = write_dataset(
        tmp_path, [ROW_WITH_COMPLEXITY, "", "   ", ROW_WITH_SCHEMA_NAME]
    )
    note, cart = load_edgejson(dataset, schemas)
    assert note.id == "n1"
    assert note.text == ROW_WITH_COMPLEXITY["prompt"]
    assert note.schema == NOTE
    assert note.expected == {"title": "Hi", "sent": "2024-01-02"}
    assert note.groups == {"complexity": "simple", "schema": "note"}
    assert cart.groups == {"complexity": "medium", "schema": "cart"}


def test_missing_dataset_and_schema_folder(tmp_path):
    dataset, schemas = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY])
    with pytest.raises(UserError, match=r"nope\.jsonl: dataset file not found"):
        load_edgejson(tmp_path / "nope.jsonl", schemas)
    with pytest.raises(UserError, match="missing: schema folder not found"):
        load_edgejson(dataset, tmp_path / "missing")


def test_line_that_is_not_json(tmp_path):
    message = load_error(tmp_path, [ROW_WITH_COMPLEXITY, "", '{"id": "x",'])
    assert message.startswith(f"{tmp_path / 'train.jsonl'}:3: not valid JSON (")


def test_nan_in_a_row_is_not_json(tmp_path):
    assert "train.jsonl:1: not valid JSON (NaN" in load_error(tmp_path, ['{"id": NaN}'])


def test_row_that_is_not_an_object(tmp_path):
    assert load_error(tmp_path, ["[1, 2]"]).endswith(
        "train.jsonl:1: expected a JSON object, got array"
    )


@pytest.mark.parametrize("field", ["id", "schema_id", "prompt", "expected_output"])
def test_missing_field(tmp_path, field):
    row = {k: v for k, v in ROW_WITH_COMPLEXITY.items() if k != field}
    message = load_error(tmp_path, [ROW_WITH_SCHEMA_NAME, row])
    assert message.endswith(f"train.jsonl:2: missing field '{field}'")


def test_field_of_wrong_type(tmp_path):
    message = load_error(tmp_path, [{**ROW_WITH_COMPLEXITY, "prompt": ["x"]}])
    assert message.endswith("train.jsonl:1: field 'prompt' must be a string")


def test_unknown_schema(tmp_path):
    message = load_error(tmp_path, [{**ROW_WITH_COMPLEXITY, "schema_id": "ghost"}])
    schemas = tmp_path / "schemas"
    assert message.endswith(
        f"train.jsonl:1: unknown schema 'ghost' (no ghost.json under {schemas})"
    )


def test_duplicate_id(tmp_path):
    message = load_error(tmp_path, [ROW_WITH_COMPLEXITY, ROW_WITH_SCHEMA_NAME, ROW_WITH_COMPLEXITY])
    assert message.endswith("train.jsonl:3: duplicate id 'n1' (first on line 1)")


def test_complexity_must_match_the_schema_folder(tmp_path):
    message = load_error(tmp_path, [{**ROW_WITH_COMPLEXITY, "complexity": "complex"}])
    assert message.endswith("train.jsonl:1: complexity 'complex' but schema 'note' is in simple/")


def test_empty_dataset(tmp_path):
    assert load_error(tmp_path, ["", "  "]).endswith("train.jsonl: no examples (the file is empty)")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "note.json: not valid JSON ("),
        ("[1]", "note.json: expected a JSON object, got array"),
        ('{"type": "strin"}', "note.json: invalid JSON Schema at $.type"),
        ('{"$ref": "https://example.com/s.json"}', "note.json: $ref 'https://example.com/s.json'"),
    ],
)
def test_bad_schema_file(tmp_path, content, message):
    dataset, schemas = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY])
    (schemas / "simple" / "note.json").write_text(content)
    with pytest.raises(UserError) as info:
        load_edgejson(dataset, schemas)
    assert message in str(info.value)


def test_unreadable_schema_file(tmp_path):
    dataset, schemas = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY])
    (schemas / "simple" / "note.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(UserError, match=r"note\.json:1: not UTF-8 text \(byte 0\)"):
        load_edgejson(dataset, schemas)


def test_same_schema_id_in_two_folders(tmp_path):
    dataset, schemas = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY])
    (schemas / "complex").mkdir()
    (schemas / "complex" / "note.json").write_text("{}")
    with pytest.raises(UserError, match="schema 'note' also defined in"):
        load_edgejson(dataset, schemas)


def test_check_expected_outputs(tmp_path):
    wrong = {**ROW_WITH_SCHEMA_NAME, "id": "c2", "expected_output": {"total": "9.5"}}
    bad_date = {**ROW_WITH_COMPLEXITY, "id": "n2", "expected_output": {"title": "a", "sent": "2/1"}}
    dataset, schemas = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY, wrong, bad_date])
    examples = load_edgejson(dataset, schemas)
    assert check_expected_outputs(examples) == [("c2", "$.total: '9.5' is not of type 'number'")]
    with_formats = check_expected_outputs(examples, check_formats=True)
    assert [example_id for example_id, _ in with_formats] == ["c2", "n2"]


def test_task_prompt_and_score(tmp_path):
    dataset, _ = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY])
    task = get_task("edgejson")
    assert isinstance(task, EdgeJSONTask)
    assert task.name == "edgejson"
    (example,) = task.load(dataset, None)  # schemas default to the folder beside the dataset
    prompt = task.build_prompt(example)
    assert isinstance(prompt, Prompt)
    assert prompt.system is None
    schema_line = json.dumps(NOTE, separators=(",", ":"))
    assert prompt.user == task.prompt_template.format(schema=schema_line, text=example.text)
    assert schema_line in prompt.user.splitlines()
    assert example.text in prompt.user

    # the task does not score: the family it names does
    assert task.metric_family == "edgejson"
    family = get_family(task.metric_family)
    right = '{"title": "Hi", "sent": "2024-01-02"}'
    result = score_output([family], right, example.expected, example.schema)
    assert result.scores["edgejson"]["json_exact"] == 1
    assert result.scores["edgejson"]["schema_compliance"] == 1
    empty = family.evaluate(parse_json_output("{}"), example.expected, example.schema)
    assert empty.details["schema_errors"] == ["$: 'title' is a required property"]
    assert empty.scores["schema_compliance"] == 0


def test_the_task_family_can_assert_formats(tmp_path):
    dataset, schemas = write_dataset(tmp_path, [ROW_WITH_COMPLEXITY])
    (example,) = EdgeJSONTask().load(dataset, schemas)
    output = parse_json_output('{"title": "Hi", "sent": "yesterday"}')
    family = get_family(EdgeJSONTask.metric_family)
    assert (
        family.evaluate(output, example.expected, example.schema).scores["schema_compliance"] == 1
    )
    strict = get_family(EdgeJSONTask.metric_family, {"check_formats": True})
    assert (
        strict.evaluate(output, example.expected, example.schema).scores["schema_compliance"] == 0
    )


def test_default_paths_point_at_built_in_data():
    dataset, schemas = EdgeJSONTask.default_paths()
    assert dataset.parts[-3:] == ("data", "edgejson", "test.jsonl")
    assert schemas.parts[-3:] == ("data", "edgejson", "schemas")


@pytest.mark.skipif(not (PUBLIC / "train.jsonl").is_file(), reason="public EdgeJSON split absent")
def test_public_train_split_loads():
    examples = load_edgejson(PUBLIC / "train.jsonl", PUBLIC / "schemas")
    assert len(examples) == 629
    print("by complexity:", dict(Counter(e.groups["complexity"] for e in examples)))
    for check_formats in (False, True):
        failures = check_expected_outputs(examples, check_formats=check_formats)
        assert all(isinstance(i, str) and isinstance(r, str) for i, r in failures)
        print(f"check_formats={check_formats}: {len(failures)} of 629 expected outputs fail")
        for example_id, reason in failures[:5]:
            print(f"  {example_id}: {reason}")


def test_line_separator_inside_a_json_string_stays_in_its_row(tmp_path):
    # JSON allows U+2028 unescaped; str.splitlines would cut the row in two there.
    row = {**ROW_WITH_COMPLEXITY, "prompt": "first\u2028second"}
    dataset, schemas = write_dataset(tmp_path, [json.dumps(row, ensure_ascii=False)])
    (example,) = load_edgejson(dataset, schemas)
    assert example.text == "first\u2028second"
