"""`--prompt reference`: each benchmark's own prompt, rendered exactly as its published code
writes it (the fixture strings below are that code's output for these rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.tasks import get_task
from edgebench.tasks.base import Example, prompt_template_for
from edgebench.tasks.deepjson import load_deepjson
from tests.helpers.fakes import EchoTask

NOTE_TEXT = "Push Notification\n\nTitle: Door open\nPriority: high\n\nExtract it as JSON."
NOTE = Example(
    id="n1",
    text=NOTE_TEXT,
    schema_id="notification",
    schema={"type": "object", "properties": {"title": {"type": "string"}}},
    expected={"title": "Door open"},
)

# What SLMBench's eval.py (`evaluate_example`) sends for that row: no schema.
EDGEJSON_REFERENCE = (
    "Extract the structured JSON data from the following text.\n"
    "\n"
    "Input: Push Notification\n"
    "\n"
    "Title: Door open\n"
    "Priority: high\n"
    "\n"
    "Extract it as JSON.\n"
    "\n"
    "Output:"
)

# A row as the DeepJSONEval release stores it: the schema column pretty-printed with
# two-space indents and its Chinese kept, a Chinese text with its leading newline.
CJK_SCHEMA_TEXT = """{
  "title": "电影",
  "type": "object",
  "required": [
    "片名"
  ],
  "properties": {
    "片名": {
      "title": "片名",
      "type": "string",
      "description": "电影的名称"
    }
  }
}"""
CJK_TEXT = "\n在科幻影坛的璀璨星河中，《量子之门》于2028年上映。\n"
CJK_ROW = {
    "schema": CJK_SCHEMA_TEXT,
    "text": CJK_TEXT,
    "json": json.dumps({"片名": "量子之门"}, ensure_ascii=False),
    "category": "Movie",
    "true_depth": 3,
}

# running_inference.py: JSON_Output_meta_prompt.txt + "\n" + the schema and text sections.
DEEPJSON_REFERENCE_CJK = (
    "*** Task Scenario  \n"
    "This is a text information extraction scenario. You need to map relevant content from "
    "the user's natural language text description to the given JSON Schema and finally output "
    "a JSON Object.  \n"
    "\n"
    "*** Summary of Input Information:  \n"
    "1. JSON Schema  \n"
    "2. Text Description  \n"
    "\n"
    "*** Task Rules  \n"
    "1. Strictly follow JSON format for mapping.  \n"
    "2. Strictly adhere to the hierarchical relationships in the JSON Schema.  \n"
    "3. Understand the requirements of each property in the JSON Schema and correctly match "
    "content from the text description.  \n"
    "4. All output content in the mapped JSON must be strictly extracted from the user's input "
    "information.  \n"
    "5. If the field description does not explicitly specify a language type, string-type "
    "fields must match the language type of the text description.  \n"
    "6. The final JSON Object must be output in Markdown format, i.e., "
    "```json\\n{JSON Object}\\n```.\n"
    "\n"
    "*** JSON Schema\n" + CJK_SCHEMA_TEXT + "\n"
    "\n"
    "*** Text Description\n" + CJK_TEXT
)


def _cjk_example(tmp_path: Path) -> Example:
    path = tmp_path / "zh.jsonl"
    path.write_text(json.dumps(CJK_ROW, ensure_ascii=False) + "\n", encoding="utf-8")
    (example,) = load_deepjson(path)
    return example


def test_edgejson_reference_prompt_is_the_harness_prompt_without_schema():
    prompt = get_task("edgejson").build_prompt(NOTE, "reference")
    assert prompt.system is None
    assert prompt.user == EDGEJSON_REFERENCE
    assert "title" not in prompt.user  # no schema in the harness's prompt


def test_deepjson_reference_prompt_on_a_chinese_row_is_the_benchmarks_byte_for_byte(
    tmp_path: Path,
):
    prompt = get_task("deepjson").build_prompt(_cjk_example(tmp_path), "reference")
    assert prompt.system is None
    assert prompt.user == DEEPJSON_REFERENCE_CJK
    # the language rule, and the CJK text and schema kept as they are (no \\u escapes)
    assert "must match the language type of the text description" in prompt.user
    assert "《量子之门》" in prompt.user and '"description": "电影的名称"' in prompt.user
    assert "\\u" not in prompt.user


def test_default_style_is_todays_prompt_and_the_default_argument(tmp_path: Path):
    for name, example in (("edgejson", NOTE), ("deepjson", _cjk_example(tmp_path))):
        task = get_task(name)
        assert task.prompt_template == task.prompt_templates["default"]
        assert task.build_prompt(example) == task.build_prompt(example, "default")
        assert task.build_prompt(example) != task.build_prompt(example, "reference")


def test_a_text_holding_braces_or_placeholders_is_left_as_it_is():
    text = 'literal {schema} and {"a": 1}'
    example = Example("b", text, "s", {"type": "object"}, {})
    for style in ("default", "reference"):
        assert get_task("edgejson").build_prompt(example, style).user.count(text) == 1


def test_unknown_style_is_one_line_listing_the_styles():
    with pytest.raises(UserError, match=r"^--prompt: unknown style 'paper' \(styles: default, "):
        get_task("edgejson").build_prompt(NOTE, "paper")
    with pytest.raises(UserError, match="unknown style"):
        prompt_template_for(EchoTask(), "")


def test_roundtrip_has_no_reference_prompt_and_says_so_naming_the_task():
    task = get_task("roundtrip")
    example = Example("r", "Under the path root/a, there exists a node with value 1.", "o", {}, {})
    with pytest.raises(UserError, match=r"--prompt reference: task 'roundtrip' has no published"):
        task.build_prompt(example, "reference")
    assert task.build_prompt(example).user.endswith("JSON:")
