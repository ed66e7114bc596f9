"""`edgebench score`: re-scoring a stored run folder without a model, for runs and
consistency runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.rescore import rescore
from edgebench.runfolder.records import RunSettings
from edgebench.runner.jobs import ConsistencyRun
from edgebench.runner.prepare import load_examples
from edgebench.tasks import get_task
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.faults import break_edgejson_scoring
from tests.helpers.run_fake import RunFake


def recorded_run(
    run_fake: RunFake,
    task_name: str,
    backend: FakeBackend,
    *,
    dataset: Path | None = None,
    **kw: Any,
) -> Path:
    """A fake-backend run of a real task whose manifest names its dataset file (and its
    sha256), as `edgebench score` needs."""
    task = get_task(task_name)
    examples, record = load_examples(task, RunSettings(task=task_name, dataset=dataset))
    result = run_fake(
        backend,
        task_impl=task,
        examples=examples,
        dataset_record=record,
        task=task_name,
        dataset=dataset,
        **kw,
    )
    return result.run_dir


def edgejson_run(run_fake: RunFake, **settings: Any) -> Path:
    """Three built-in EdgeJSON examples, the second one answered right."""
    examples, _ = load_examples(get_task("edgejson"), RunSettings())
    right = json.dumps(examples[1].expected).replace(" ", "")
    backend = FakeBackend(['{"site": "x"}', right, "no"])
    return recorded_run(run_fake, "edgejson", backend, limit=3, **settings)


def test_score_reproduces_the_summary_exactly(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = edgejson_run(run_fake, metrics=("structure", "sted", "sobench"))
    summary = (run_dir / "summary.json").read_bytes()
    samples = (run_dir / "samples.jsonl").read_bytes()
    exact = [s["scores"]["edgejson"]["json_exact"] for s in read_jsonl(run_dir / "samples.jsonl")]
    assert exact == [0, 1, 0]
    rescore(run_dir)
    assert (run_dir / "summary.json").read_bytes() == summary
    assert (run_dir / "samples.jsonl").read_bytes() == samples
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["rescored"][0]["families"] == ["edgejson", "structure", "sted", "sobench"]


def test_score_adds_families_with_parameters(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = edgejson_run(run_fake)
    summary = rescore(
        run_dir, metrics=("sobench",), metric_params={"sobench": {"fuzzy_string_threshold": "0.5"}}
    ).summary
    arm = summary.arms[0]
    assert list(arm.families) == ["edgejson", "sobench"]
    sobench = arm.families["sobench"]
    assert sobench.role == "extra" and sobench.parameters["fuzzy_string_threshold"] == 0.5
    assert sobench.overall["fsma_exact"] == pytest.approx(1 / 3)
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [list(s["scores"]) for s in samples] == [["edgejson", "sobench"]] * 3
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["families"]["sobench"]["parameters"]["fuzzy_string_threshold"] == 0.5
    # Re-scored again without --metrics: the recorded families and parameters.
    again = rescore(run_dir).summary
    assert again.arms[0].families["sobench"] == sobench


def test_score_refuses_other_data(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = edgejson_run(run_fake)
    data = tmp_path / "copy"
    recorded = json.loads((run_dir / "manifest.json").read_text())["dataset"]
    shutil.copytree(recorded["schemas"], data / "schemas")
    rows = Path(recorded["path"]).read_text()
    (data / "test.jsonl").write_text(rows.replace("North greenhouse", "South greenhouse"))
    with pytest.raises(UserError, match="not the dataset this run used"):
        rescore(run_dir, dataset=data / "test.jsonl")
    (data / "test.jsonl").write_text(rows)  # the same data in another folder
    assert rescore(run_dir, dataset=data / "test.jsonl").summary.arms[0].n_examples == 3


def test_score_refuses_run_folders_of_another_format(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = edgejson_run(run_fake)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (run_dir / "manifest.json").write_text(json.dumps({**manifest, "schema_version": "3.0"}))
    with pytest.raises(UserError, match=r"run-folder format 3.0, but this edgebench reads"):
        rescore(run_dir)
    del manifest["schema_version"]  # what edgebench's first format looks like
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="first, unversioned format"):
        rescore(run_dir)


def test_cli(run_fake: RunFake, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run_cli(capsys, "score", str(tmp_path / "missing"))
    assert_one_line_error(code, err, "no such run folder")
    run_dir = edgejson_run(run_fake)
    code, err = run_cli(capsys, "score", str(run_dir), "--metrics", "sted")
    assert code == 0, err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["arms"][0]["families"]["sted"]["role"] == "extra"
    (run_dir / "samples.jsonl").write_text("")
    code, err = run_cli(capsys, "score", str(run_dir))
    assert_one_line_error(code, err, "no samples")


ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]


def consistency_run(run_fake: RunFake, tmp_path: Path) -> Path:
    payloads = tmp_path / "payloads.jsonl"
    payloads.write_text('{"a": 1, "b": "x"}\n{"c": [1]}\n')
    return recorded_run(
        run_fake,
        "roundtrip",
        FakeBackend(sampled=ANSWERS),
        dataset=payloads,
        kind=ConsistencyRun(samples=3, temperatures=(0.3,)),
    )


def test_rescoring_a_consistency_run_reproduces_it(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = consistency_run(run_fake, tmp_path)
    before = (run_dir / "summary.json").read_text()
    rescore(run_dir)
    assert (run_dir / "summary.json").read_text() == before
    changed = rescore(run_dir, metric_params={"sted": {"steepness": "0"}}).summary
    assert changed.consistency is not None and changed.consistency.parameters["steepness"] == 0
    for prompt in changed.consistency.by_prompt["0.3"].values():
        assert prompt.consistency == pytest.approx(prompt.sted_mean)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["consistency"]["sted_parameters"]["steepness"] == 0


def test_a_consistency_run_is_scored_by_sted_only(run_fake: RunFake, tmp_path: Path) -> None:
    run_dir = consistency_run(run_fake, tmp_path)
    with pytest.raises(UserError, match="--metrics does not apply to a consistency run"):
        rescore(run_dir, metrics=("sobench",))
    with pytest.raises(UserError, match=r"uses only sted\.\*, not 'sobench'"):
        rescore(run_dir, metric_params={"sobench": {"fuzzy_string_threshold": "0.5"}})


def deepjson_file(tmp_path: Path, expected: list[dict[str, Any]], schema: dict[str, Any]) -> Path:
    """A DeepJSONEval .jsonl of one row per expected value, all under `schema`."""
    path = tmp_path / "deep.jsonl"
    rows = [
        {
            "schema": json.dumps(schema),
            "text": f"text {i}",
            "json": json.dumps(value),
            "depth": 3,
            "category": "movie",
        }
        for i, value in enumerate(expected)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


MOVIE_LIKE = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "ids": {"type": "array", "items": {}}},
    "required": ["title"],
}


def test_score_parse_reference_rescores_with_the_published_extraction(
    run_fake: RunFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = {"title": "Dune", "ids": [1, 2]}
    data = deepjson_file(tmp_path, [truth] * 3, MOVIE_LIKE)
    answers = [
        json.dumps(truth),  # bare: both extractions take it
        "Here it is: " + json.dumps(truth) + " Enjoy.",  # prose around it: lenient only
        "```\n" + json.dumps(truth) + "\n```",  # untagged fence: lenient only
    ]
    run_dir = recorded_run(run_fake, "deepjson", FakeBackend(answers), dataset=data)
    lenient_summary = json.loads((run_dir / "summary.json").read_text())
    assert lenient_summary["parse"] == "lenient"

    code, err = run_cli(capsys, "score", str(run_dir), "--parse", "reference")
    assert code == 0, err
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [s["scores"]["deepjson"]["syntax"] for s in samples] == [1, 0, 0]
    assert [s["scores"]["deepjson"]["valid_json"] for s in samples] == [1, 1, 1]
    assert [s["parse"]["path"] for s in samples] == ["whole", "none", "none"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["settings"]["parse"] == "reference"
    assert manifest["rescored"][-1]["parse"] == "reference"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["parse"] == "reference"
    assert summary["arms"][0]["families"]["deepjson"]["overall"]["syntax"] == pytest.approx(1 / 3)

    rescore(run_dir)  # without --parse: the mode the run now records
    assert json.loads((run_dir / "summary.json").read_text()) == summary
    rescore(run_dir, parse="lenient")
    assert json.loads((run_dir / "summary.json").read_text()) == lenient_summary
    assert [
        r["parse"] for r in json.loads((run_dir / "manifest.json").read_text())["rescored"]
    ] == [
        "reference",
        "reference",
        "lenient",
    ]


def test_an_unknown_parse_mode_is_a_one_line_error(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = edgejson_run(run_fake)
    code, err = run_cli(capsys, "score", str(run_dir), "--parse", "strict")
    assert_one_line_error(code, err, "--parse: unknown mode 'strict' (use lenient or reference)")
    code, err = run_cli(capsys, "run", "--parse", "loose", "--limit", "1")
    assert_one_line_error(code, err, "--parse: unknown mode 'loose'")


def test_a_400_digit_integer_is_scored_exactly_by_run_and_score(
    run_fake: RunFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = 10**400
    truth = {"title": "x", "ids": [big, 2**53 + 1]}
    data = deepjson_file(tmp_path, [truth] * 3, MOVIE_LIKE)
    answers = [
        json.dumps(truth),
        json.dumps({"title": "x", "ids": [big, 2**53]}),  # 2**53 + 1 and 2**53: one double
        json.dumps({"title": "x", "ids": [big + 1, 2**53 + 1]}),
    ]
    run_dir = recorded_run(
        run_fake, "deepjson", FakeBackend(answers), dataset=data, metrics=("sobench", "sted")
    )
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [s["error"] for s in samples] == [None, None, None]
    # key matching: title 1, ids Jaccard 1 / 3 over the union of keys (2)
    expected_km = [1.0, (1 + 1 / 3) / 2, (1 + 1 / 3) / 2]
    km = [s["scores"]["deepjson"]["key_matching"] for s in samples]
    assert km == pytest.approx(expected_km)
    assert [s["scores"]["deepjson"]["strict"] for s in samples] == [1, 0, 0]
    before = (run_dir / "samples.jsonl").read_text()
    code, err = run_cli(capsys, "score", str(run_dir))
    assert code == 0 and "Traceback" not in err, err
    assert (run_dir / "samples.jsonl").read_text() == before


def test_a_scoring_failure_under_score_is_recorded_as_run_records_it(
    run_fake: RunFake, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_edgejson_scoring(
        monkeypatch, {"site": "x"}, OverflowError("int too large to convert to float")
    )
    run_dir = edgejson_run(run_fake)
    recorded = read_jsonl(run_dir / "samples.jsonl")
    failed = "scoring failed: OverflowError: int too large to convert to float"
    assert [s["error"] for s in recorded] == [failed, None, None]
    summary = (run_dir / "summary.json").read_text()
    code, err = run_cli(capsys, "score", str(run_dir))
    assert code == 0 and "Traceback" not in err, err
    rescored = read_jsonl(run_dir / "samples.jsonl")
    assert [s["error"] for s in rescored] == [failed, None, None]
    assert rescored[0]["scores"] == {} and rescored[0]["parse"] == recorded[0]["parse"]
    assert (run_dir / "summary.json").read_text() == summary
    assert json.loads(summary)["arms"][0]["n_errors"] == 1


def test_run_parse_reference_scores_as_score_parse_reference_does(
    run_fake: RunFake, tmp_path: Path
) -> None:
    truth = {"title": "Dune", "ids": [1, 2]}
    data = deepjson_file(tmp_path, [truth] * 2, MOVIE_LIKE)
    answers = ["Here: " + json.dumps(truth), "```json\n" + json.dumps(truth) + "\n```"]
    direct = recorded_run(
        run_fake, "deepjson", FakeBackend(answers), dataset=data, parse="reference"
    )
    samples = read_jsonl(direct / "samples.jsonl")
    assert [s["parse"]["path"] for s in samples] == ["none", "fenced_json"]
    assert [s["scores"]["deepjson"]["syntax"] for s in samples] == [0, 1]
    manifest = json.loads((direct / "manifest.json").read_text())
    assert manifest["settings"]["parse"] == "reference"
    before = (direct / "summary.json").read_text()
    rescore(direct)  # the recorded mode: the same scores
    assert (direct / "summary.json").read_text() == before


def test_score_rewrites_a_run_holding_lone_surrogates(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str]
) -> None:
    """`"\\ud800"` is valid JSON that no UTF-8 file can hold as it decodes: `run` writes it
    escaped, and re-scoring (either extraction) writes through the same writer."""
    backend = FakeBackend(['{"site": "\\ud800"}', '```json\n{"site": "\\udfff x"}\n```', "no"])
    run_dir = recorded_run(run_fake, "edgejson", backend, limit=3)
    assert read_jsonl(run_dir / "samples.jsonl")[0]["parsed"] == {"site": "\ud800"}
    (run_dir / "summary.json").unlink()
    for args in ((), ("--parse", "reference")):
        code, err = run_cli(capsys, "score", str(run_dir), *args)
        assert code == 0, err
        assert "Traceback" not in err
        assert (run_dir / "summary.json").exists()
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert [s["parsed"] for s in samples[:2]] == [{"site": "\ud800"}, {"site": "\udfff x"}]
    assert json.loads((run_dir / "summary.json").read_text())["parse"] == "reference"


def test_ctrl_c_while_score_writes_its_files_leaves_them_agreeing(
    run_fake: RunFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C between samples.jsonl and manifest.json (before: samples scored by the
    new families under a manifest and summary of the old ones) waits for the last file,
    then stops the command (exit 130)."""
    import os
    import signal

    from edgebench.runfolder.folder import RunFolder

    run_dir = edgejson_run(run_fake)
    real = RunFolder.write_manifest

    def write_manifest(self: RunFolder, *args: Any, **kwargs: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, as the file is written
        real(self, *args, **kwargs)

    monkeypatch.setattr(RunFolder, "write_manifest", write_manifest)
    with pytest.raises(KeyboardInterrupt):
        rescore(run_dir, metrics=("structure",))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    scored = read_jsonl(run_dir / "samples.jsonl")[0]["scores"]
    assert manifest["rescored"][0]["families"] == ["edgejson", "structure"]
    assert set(scored) == {"edgejson", "structure"}
    assert "structure" in json.dumps(summary["arms"][0])
