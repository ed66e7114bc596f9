"""The round-trip task: path descriptions, corpora, scoring (paper 001)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.prepare import load_examples
from edgebench.runner.run import RunSettings, execute
from edgebench.tasks import get_task
from edgebench.tasks.roundtrip import RoundtripTask, describe
from tests.unit.test_runner import model


def test_description_is_deterministic_depth_first_and_free_of_json_syntax() -> None:
    value = {"users": [{"name": "Ada", "id": 101}], "tags": [], "meta": {}, "ok": True, "x": None}
    assert describe(value).splitlines() == [
        "Under the path root/meta, there exists an empty object.",
        "Under the path root/ok, there exists a node with value true.",
        "Under the path root/tags, there exists an empty list.",
        "Under the path root/users/0/id, there exists a node with value 101.",
        'Under the path root/users/0/name, there exists a node with value "Ada".',
        "Under the path root/x, there exists a node with value null.",
    ]
    assert describe(dict(reversed(list(value.items())))) == describe(value)
    assert not set("{}[]:") & set(describe(value))


def test_default_corpus_is_the_built_in_edgejson_answers() -> None:
    task = RoundtripTask()
    examples, info = load_examples(task, RunSettings(task="roundtrip"))
    assert len(examples) == 200 and info["path"].endswith("edgejson/test.jsonl")
    first = examples[0]
    assert first.text == describe(first.expected)
    assert first.groups["depth"] == "3" and first.groups["complexity"] == "complex"
    assert first.schema["type"] == "object"


def test_a_jsonl_of_objects(tmp_path: Path) -> None:
    path = tmp_path / "payloads.jsonl"
    path.write_text('{"a": {"b": [1, 2]}}\n\n{"c": "x"}\n')
    examples = get_task("roundtrip").load(path, None)
    assert [e.id for e in examples] == ["payloads:1", "payloads:3"]
    assert [e.groups for e in examples] == [{"depth": "3"}, {"depth": "1"}]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"a": 1}\n[1, 2]\n', "payloads.jsonl:2: expected a JSON object, got array"),
        ('{"a": 1}\n{"a": \n', "payloads.jsonl:2: not valid JSON"),
        ("\n", "no objects"),
    ],
)
def test_bad_corpus_lines(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "payloads.jsonl"
    path.write_text(content)
    with pytest.raises(UserError, match=fragment):
        get_task("roundtrip").load(path, None)


def test_a_run_scores_csa_and_nted(tmp_path: Path) -> None:
    path = tmp_path / "payloads.jsonl"
    objects = [{"user": {"name": "Ada", "age": 30}}, {"k": [1, 2, 3]}]
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    task = get_task("roundtrip")
    examples, info = load_examples(task, RunSettings(task="roundtrip", dataset=path))
    backend = FakeBackend(['{"user":{"age":"30","name":"Ada"}}', '{"k":[1,2]}'])
    result = execute(
        RunSettings(task="roundtrip", dataset=path, out=tmp_path / "run", warmup=False),
        model(),
        task,
        examples,
        info,
        worker_factory=lambda mode: InProcessWorker(backend),
    )
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert (
        "Under the path root/user/age, there exists a node with value 30." in samples[0]["prompt"]
    )
    assert samples[0]["scores"]["csa"] == 1.0  # "30" equals 30 for CSA
    assert samples[0]["scores"]["nted"] == pytest.approx(1 - 1 / 7)  # a string leaf
    assert samples[1]["scores"]["csa"] == pytest.approx(2 / 3)
    assert list(result.summary["metrics"]) == ["n", "csa", "nted", "valid_json"]
    assert result.summary["by_constraint"]["none"]["noncompliant"] is None
    assert set(result.summary["by_depth"]) == {"2"}  # both objects nest two levels
