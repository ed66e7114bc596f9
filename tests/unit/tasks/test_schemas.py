"""The schemas task: one unlabelled example per schema file, grouped by subset; the
default prompt and the benchmark's own (`reference`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.tasks import get_task
from edgebench.tasks.schemas import REFERENCE_SYSTEM, SchemasTask

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    for subset in ("Glaiveai2K", "Github_hard"):
        (tmp_path / subset).mkdir()
        (tmp_path / subset / "s.json").write_text(json.dumps(SCHEMA))
    return tmp_path


def test_examples_have_no_answer_and_the_subset_as_group(data: Path) -> None:
    examples = get_task("schemas").load(data, None)
    assert [(e.id, e.groups, e.expected) for e in examples] == [
        ("Github_hard/s", {"subset": "Github_hard"}, None),
        ("Glaiveai2K/s", {"subset": "Glaiveai2K"}, None),
    ]
    assert examples[0].schema == SCHEMA and examples[0].schema_id == "Github_hard/s"


def test_the_reference_prompt_is_the_benchmarks_system_line_and_the_schema(data: Path) -> None:
    task = SchemasTask()
    example = task.load(data, None)[0]
    prompt = task.build_prompt(example, "reference")
    assert prompt.system == REFERENCE_SYSTEM
    assert prompt.system == "You need to generate a JSON object that matches the schema below."
    assert prompt.user == json.dumps(SCHEMA)  # Python's default separators, as the harness
    assert set(task.prompt_templates) == {"default", "reference"}


def test_the_default_prompt_asks_for_an_instance_of_the_compact_schema(data: Path) -> None:
    task = SchemasTask()
    prompt = task.build_prompt(task.load(data, None)[0])
    assert prompt.system is None
    assert prompt.user.endswith(json.dumps(SCHEMA, separators=(",", ":")))
    assert task.prompt_template == task.prompt_templates["default"]
    with pytest.raises(UserError, match="unknown style 'paper'"):
        task.build_prompt(task.load(data, None)[0], "paper")


def test_dataset_options_that_do_not_apply(data: Path) -> None:
    with pytest.raises(UserError, match="needs --dataset"):
        SchemasTask().resolve_paths(None, None)
    with pytest.raises(UserError, match="--schemas does not apply"):
        SchemasTask().resolve_paths(data, data)
