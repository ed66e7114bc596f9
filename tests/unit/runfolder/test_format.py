"""The published run-folder format: generated from the record types, matching what runs
write, read back to the same records, and refused in one line when it is not ours."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runfolder.publish import published, schemas
from edgebench.runfolder.read import read_manifest, read_run, read_summary
from edgebench.runner.jobs import ConsistencyRun
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.run_fake import RunFake

DOCS = Path(__file__).parents[3] / "docs"


def test_the_published_format_is_generated_from_the_records() -> None:
    for path, text in published(DOCS).items():
        assert path.is_file(), f"{path} is missing: python -m edgebench.runfolder.publish docs"
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} is out of date: python -m edgebench.runfolder.publish docs"
        )


def _validate(run_dir: Path) -> None:
    found = schemas()
    for name, data in (
        ("manifest.schema.json", json.loads((run_dir / "manifest.json").read_text())),
        ("summary.schema.json", json.loads((run_dir / "summary.json").read_text())),
        *(("samples.schema.json", row) for row in read_jsonl(run_dir / "samples.jsonl")),
    ):
        jsonschema.Draft202012Validator(found[name]).validate(data)


def test_what_runs_write_follows_the_published_schemas(run_fake: RunFake, tmp_path: Path) -> None:
    several = run_fake(
        [RIGHT, WRONG, "not json"],
        models=[fake_model("a"), fake_model("b", backend="onnx")],
        constraints=("none", "gbnf", "mask"),
        metrics=("structure", "sobench"),
    )
    _validate(several.run_dir)
    sampled = run_fake(
        [RIGHT], n=2, kind=ConsistencyRun(samples=2, temperatures=(0.5,)), out=tmp_path / "c"
    )
    _validate(sampled.run_dir)


def test_records_read_back_to_what_was_written(run_fake: RunFake) -> None:
    result = run_fake([RIGHT, WRONG], constraints=("none", "mask"))
    records = read_run(result.run_dir)
    assert read_summary(result.run_dir) == result.summary
    for sample in records.samples:
        assert type(sample).from_json(sample.to_json()) == sample
    manifest = records.manifest
    assert type(manifest).from_json(manifest.to_json()) == manifest
    assert [(a.model, a.constraint) for a in manifest.arms] == [
        ("fake-model", "none"),
        ("fake-model", "mask"),
    ]


def _with_manifest(run_dir: Path, **changes: object) -> None:
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_another_major_version_is_refused_in_one_line(run_fake: RunFake) -> None:
    run_dir = run_fake().run_dir
    _with_manifest(run_dir, schema_version="3.1")
    with pytest.raises(UserError, match=r"format 3\.1, but this edgebench reads format 2\.x"):
        read_manifest(run_dir)
    _with_manifest(run_dir, schema_version="2.11")  # a newer minor version: fields added
    data = json.loads((run_dir / "manifest.json").read_text())
    data["field_of_the_future"] = {"x": 1}
    (run_dir / "manifest.json").write_text(json.dumps(data))
    assert read_manifest(run_dir).schema_version == "2.11"


def test_a_folder_of_the_unversioned_format_is_refused_in_one_line(run_fake: RunFake) -> None:
    run_dir = run_fake().run_dir
    data = json.loads((run_dir / "manifest.json").read_text())
    del data["schema_version"]
    (run_dir / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="first, unversioned format") as error:
        read_manifest(run_dir)
    assert "\n" not in str(error.value)


def test_a_broken_record_names_the_file_and_the_field(run_fake: RunFake) -> None:
    run_dir = run_fake().run_dir
    samples = run_dir / "samples.jsonl"
    rows = read_jsonl(samples)
    rows[1]["prompt_tokens"] = "many"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(
        UserError, match=r"samples\.jsonl:2: .*\(prompt_tokens: expected an integer"
    ):
        read_run(run_dir)
    _with_manifest(run_dir, models=[{"label": "x"}])
    with pytest.raises(
        UserError, match=r"manifest\.json: .*\(models\[0\]: field 'path' is missing"
    ):
        read_manifest(run_dir)


def test_the_arm_constraint_description_names_every_mode() -> None:
    from edgebench.constraints.spec import MODES
    from edgebench.record import field_doc
    from edgebench.runfolder.records import ArmRecord

    described = field_doc(ArmRecord, "constraint")
    assert all(mode in described for mode in MODES), described
