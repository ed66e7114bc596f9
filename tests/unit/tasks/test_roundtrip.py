"""The round-trip task: path descriptions, corpora, scoring (paper 001)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.metrics import get_family
from edgebench.metrics.score import score_output
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prepare import load_examples
from edgebench.tasks import get_task
from edgebench.tasks.roundtrip import RoundtripTask, describe
from tests.helpers.run_fake import RunFake


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
    examples, dataset = load_examples(task, RunSettings(task="roundtrip"))
    assert len(examples) == 200 and dataset.path and dataset.path.endswith("edgejson/test.jsonl")
    assert dataset.n_examples == 200 and dataset.schemas and dataset.sha256
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


OBJECTS = [{"user": {"name": "Ada", "age": 30}}, {"k": [1, 2, 3]}]
REBUILDS = ['{"user":{"age":"30","name":"Ada"}}', '{"k":[1,2]}']


def write_objects(tmp_path: Path) -> Path:
    path = tmp_path / "payloads.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in OBJECTS))
    return path


def test_a_rebuild_is_scored_by_the_structure_family(tmp_path: Path) -> None:
    task = get_task("roundtrip")
    first, second = task.load(write_objects(tmp_path), None)
    family = get_family(task.metric_family)
    assert family.name == "structure"
    scores = score_output([family], REBUILDS[0], first.expected, first.schema).scores
    assert scores["structure"]["csa"] == 1.0  # "30" equals 30 for CSA
    assert scores["structure"]["nted"] == pytest.approx(1 - 1 / 7)  # a string leaf
    scores = score_output([family], REBUILDS[1], second.expected, second.schema).scores
    assert scores["structure"]["csa"] == pytest.approx(2 / 3)


def test_a_run_scores_csa_and_nted(tmp_path: Path, run_fake: RunFake) -> None:
    task = get_task("roundtrip")
    examples = task.load(write_objects(tmp_path), None)
    result = run_fake(REBUILDS, task_impl=task, examples=examples)
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert (
        "Under the path root/user/age, there exists a node with value 30." in samples[0]["prompt"]
    )
    assert samples[0]["scores"]["structure"]["csa"] == 1.0
    assert samples[0]["scores"]["structure"]["nted"] == pytest.approx(1 - 1 / 7)
    assert samples[1]["scores"]["structure"]["csa"] == pytest.approx(2 / 3)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["task"]["name"] == "roundtrip"
    assert manifest["task"]["metric_family"] == "structure"
    (arm,) = result.summary.arms
    assert list(arm.metrics) == ["n", "csa", "nted", "valid_json"]
    assert arm.metrics["csa"] == pytest.approx((1 + 2 / 3) / 2)
    assert arm.noncompliant is None  # the structure family has no schema score
    groups = arm.families["structure"].groups
    assert set(groups["depth"]) == {"2"}  # both objects nest two levels
