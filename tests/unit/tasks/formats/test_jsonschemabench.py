"""The JSONSchemaBench release layout (data/<Subset>/<name>.json): the folders a user may
name, subsets and ids in order, and every bad input as one line naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.tasks.formats.jsonschemabench import read_schemas

OBJECT = {"type": "object", "properties": {"a": {"type": "string"}}}


def release(root: Path, files: dict[str, str]) -> Path:
    """A repository laid out like guidance-ai/jsonschemabench: data/<Subset>/<name>.json."""
    for name, text in files.items():
        path = root / "data" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "README.md").write_text("JSONSchemaBench\n")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    text = json.dumps(OBJECT)
    return release(
        tmp_path / "jsonschemabench",
        {
            "Kubernetes/b.json": text,
            "Github_easy/z.json": text,
            "Github_easy/a.json": json.dumps(
                {"$schema": "http://json-schema.org/draft-04/schema#"}
            ),
        },
    )


def test_the_repository_root_the_data_folder_and_one_subset_read_alike(repo: Path) -> None:
    ids = ["Github_easy/a", "Github_easy/z", "Kubernetes/b"]
    assert [row.id for row in read_schemas(repo)] == ids
    assert [row.id for row in read_schemas(repo / "data")] == ids
    assert [(r.subset, r.name) for r in read_schemas(repo / "data" / "Kubernetes")] == [
        ("Kubernetes", "b")
    ]


def test_schemas_are_read_as_published(repo: Path) -> None:
    first = read_schemas(repo)[0]
    assert first.schema == {"$schema": "http://json-schema.org/draft-04/schema#"}
    assert first.path == repo / "data" / "Github_easy" / "a.json"


def test_a_schema_no_validator_accepts_is_still_read(tmp_path: Path) -> None:
    """Refusing a real-world schema is a per-row result (an engine's, the scorer's)."""
    odd = {"type": "object", "properties": {"a": {"$ref": "https://example.com/x.json"}}}
    root = release(tmp_path, {"JsonSchemaStore/odd.json": json.dumps(odd)})
    assert read_schemas(root)[0].schema == odd


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got array"),
        ("", "empty schema file"),
    ],
)
def test_a_bad_schema_file_is_one_line_naming_it(tmp_path: Path, text: str, fragment: str) -> None:
    root = release(tmp_path, {"Snowplow/ok.json": "{}", "Snowplow/bad.json": text})
    with pytest.raises(UserError) as info:
        read_schemas(root)
    message = str(info.value)
    assert "\n" not in message and fragment in message
    assert str(root / "data" / "Snowplow" / "bad.json") in message


def test_a_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    root = release(tmp_path, {"Snowplow/ok.json": "{}"})
    (root / "data" / "Snowplow" / "latin1.json").write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(UserError, match=r"latin1\.json:1: not UTF-8"):
        read_schemas(root)


def test_a_missing_folder_a_file_and_an_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="dataset folder not found"):
        read_schemas(tmp_path / "nowhere")
    (tmp_path / "one.json").write_text("{}")
    with pytest.raises(UserError, match="not a file"):
        read_schemas(tmp_path / "one.json")
    (tmp_path / "empty" / "Github_easy").mkdir(parents=True)
    with pytest.raises(UserError, match=r"no schema files \(expected <Subset>/<name>.json"):
        read_schemas(tmp_path / "empty")


def test_the_hugging_face_parquet_layout_is_refused_with_the_way_out(tmp_path: Path) -> None:
    (tmp_path / "Github_easy").mkdir()
    (tmp_path / "Github_easy" / "test-00000-of-00001.parquet").write_bytes(b"PAR1")
    with pytest.raises(UserError, match="parquet files are not read; give the GitHub"):
        read_schemas(tmp_path)
