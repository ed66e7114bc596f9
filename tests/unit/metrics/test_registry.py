"""The metric-family registry: names, parameters, the task's own family first, and the
families a run records and summarises."""

from __future__ import annotations

import json

import pytest

from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.metrics import (
    family_names,
    get_family,
    parse_metric_params,
    parse_metrics,
    select_families,
)
from edgebench.tasks.edgejson import EdgeJSONTask
from edgebench.tasks.roundtrip import RoundtripTask
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

# What the fake model answers in the run tests: right, unparseable, wrong type.
OUTPUTS = [RIGHT, "nope", '{"a": "1"}']


def test_every_family_declares_directions_and_parameters() -> None:
    assert family_names() == ["edgejson", "deepjson", "structure", "sted", "sobench", "schemas"]
    for name in family_names():
        family = get_family(name)
        record = family.record("extra")
        assert record.higher_is_better and all(record.higher_is_better.values())
        assert list(record.higher_is_better) == record.summary == list(family.summary_names)
        assert record.scores == list(family.score_names)
        assert record.description and record.source
        assert record.parameters == family.parameters()
        assert family.schema_score is None or family.schema_score in family.score_names
    assert get_family("sted").parameters() == {
        "type_coercion_weight": 0.9,
        "size_penalty": 0.1,
        "steepness": 2.0,
        "unparseable_similarity": 0.0,
    }
    assert get_family("sobench").parameters()["fuzzy_string_threshold"] == 0.8


def test_parameters_from_the_command_line_are_converted() -> None:
    params = parse_metric_params(["sted.size_penalty=0.2", "sobench.check_formats=true"])
    assert params == {"sted": {"size_penalty": "0.2"}, "sobench": {"check_formats": "true"}}
    assert get_family("sted", params["sted"]).size_penalty == 0.2
    assert get_family("sobench", params["sobench"]).check_formats is True
    assert get_family("sobench", {"check_formats": "False"}).check_formats is False


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: parse_metrics("structure,stedd"), "did you mean 'sted'"),
        (lambda: get_family("sted", {"lambda": "1"}), "no parameter 'lambda'"),
        (lambda: get_family("sted", {"size_penalty": "much"}), "'much' is not a float"),
        (lambda: get_family("sobench", {"check_formats": "yes"}), "not a bool"),
        (lambda: parse_metric_params(["size_penalty=0.2"]), "FAMILY.NAME=VALUE"),
        (lambda: select_families("edgejson", (), {"sted": {}}), "does not use"),
        (lambda: select_families("edgejson", ("nted",)), "unknown metric family 'nted'"),
    ],
)
def test_bad_metric_options_are_clear_errors(call, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        call()


def test_metrics_keep_their_order_without_repeats() -> None:
    assert parse_metrics(" sted, structure,sted ,") == ("sted", "structure")
    assert parse_metrics(None) == parse_metrics("") == ()


def test_the_task_family_comes_first() -> None:
    roundtrip = RoundtripTask().metric_family
    names = [f.name for f in select_families(roundtrip, ("sobench", "structure"))]
    assert names == ["structure", "sobench"]
    assert [f.name for f in select_families(EdgeJSONTask().metric_family, ())] == ["edgejson"]
    # parameters reach the family they name, the others keep their defaults
    sted, edgejson = select_families("sted", ("edgejson",), {"sted": {"size_penalty": "0.3"}})
    assert (sted.name, sted.size_penalty) == ("sted", 0.3)
    assert edgejson == get_family("edgejson")


def test_a_run_records_and_summarises_its_families(run_fake: RunFake) -> None:
    result = run_fake(OUTPUTS, metrics=("structure", "sobench"))
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    manifest = json.loads((result.run_dir / "manifest.json").read_text())

    # every sample holds every family's scores, the task's first
    assert all(list(s["scores"]) == ["edgejson", "structure", "sobench"] for s in samples)
    assert [s["scores"]["edgejson"]["json_exact"] for s in samples] == [1, 0, 0]
    assert samples[1]["scores"]["structure"] == {"csa": 0.0, "nted": 0.0, "valid_json": 0}
    assert samples[2]["score_details"]["edgejson"]["schema_errors"] == []
    assert "structure" not in samples[0]["score_details"]  # nothing to explain

    assert list(manifest["families"]) == ["edgejson", "structure", "sobench"]
    assert [f["role"] for f in manifest["families"].values()] == ["task", "extra", "extra"]
    assert manifest["families"]["sobench"]["parameters"]["fuzzy_string_threshold"] == 0.8

    (arm,) = result.summary.arms
    families = arm.families
    assert list(families) == ["edgejson", "structure", "sobench"]
    assert families["edgejson"].role == "task"
    assert arm.metrics["json_exact"] == pytest.approx(1 / 3)
    assert arm.metrics["valid_json"] == pytest.approx(2 / 3)
    assert families["structure"].overall["valid_json"] == pytest.approx(2 / 3)
    assert families["sobench"].overall["fma_exact"] == pytest.approx(1 / 3)
    assert set(families["sobench"].groups["complexity"]) == {"simple", "complex"}


def test_cli_rejects_an_unknown_family(capsys: pytest.CaptureFixture[str]) -> None:
    no_model = ("--model", "/nonexistent/model.gguf")  # a mistake must stop it before this
    code, err = run_cli(capsys, "run", *no_model, "--metrics", "edgejson,nted")
    assert_one_line_error(code, err, "unknown metric family 'nted'")
    code, err = run_cli(capsys, "run", *no_model, "--metric-param", "sted.size_penalty=0.3")
    assert_one_line_error(code, err, "does not use")


def test_cards_and_reports_see_the_extra_families(run_fake: RunFake) -> None:
    from edgebench.analysis.rundata import arms, load_run

    run_dir = run_fake(OUTPUTS, metrics=("structure",)).run_dir
    (arm,) = arms(load_run(run_dir))
    flat = arm.metrics
    assert flat["structure.valid_json"] == pytest.approx(2 / 3)
    assert flat["json_exact"] == pytest.approx(1 / 3)
    assert "edgejson.json_exact" not in flat
